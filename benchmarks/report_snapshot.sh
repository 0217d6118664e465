#!/usr/bin/env bash
# Writes the reports a refactor must leave byte-identical: the CoBBLEr import, the MT-Bench
# sample and the demo (crowd only: --no-jobs), under every profile, as JSON and HTML, into OUT.
# Compare two runs with benchmarks/report_diff.py (timestamps, commit and data_version aside).
#   benchmarks/report_snapshot.sh OUT   (from the project root; reads ../shared)
set -euo pipefail
out=$(realpath -m "${1:?usage: report_snapshot.sh OUT}")
root=$(pwd)
py=${PY:-$root/.venv/bin/python}
shared=$root/../shared/datasets
scratch=$(mktemp -d)
export DEBUG=1 DATA_DIR=$scratch SQLITE_PATH=$scratch/db.sqlite3 DATABASE_URL= REDIS_URL=
mkdir -p "$out"
$py manage.py migrate -v 0
$py manage.py import_cobbler --study cobbler "$shared/cobbler" > /dev/null
$py manage.py import_mtbench --study mtbench "$shared/samples/mtbench_sample.jsonl" > /dev/null
$py manage.py seed_demo --no-jobs --no-report > /dev/null
slugs=$($py manage.py shell -v 0 -c "from annotations.models import Study; print(' '.join(sorted(Study.objects.values_list('slug', flat=True))))")
for study in $slugs; do
  for profile in default cobbler-paper mtbench-post; do
    for fmt in json html; do
      $py manage.py report --study "$study" --profile "$profile" --format "$fmt" --out "$out/$study-$profile.$fmt" > /dev/null
    done
  done
done
rm -rf "$scratch"
echo "reports in $out"
