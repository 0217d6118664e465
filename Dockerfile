# One image for web, worker and beat (docker-compose.yml picks the command).
FROM python:3.11-slim

# Production settings: DEBUG off, so SECRET_KEY must be set at run time (the development and
# .env.example keys are refused) and HTTPS redirect, HSTS and secure cookies are on.
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 DATA_DIR=/data DEBUG=0
WORKDIR /app

# The runtime lock only (no test, lint or type-check tools); every file is checked against its hash.
COPY requirements/runtime.txt requirements/runtime.txt
RUN pip install --no-cache-dir --require-hashes --no-deps -r requirements/runtime.txt

COPY . .
RUN SECRET_KEY=collectstatic-only-not-a-runtime-key python manage.py collectstatic --noinput

RUN useradd --create-home app && mkdir -p /data && chown app /data
USER app
EXPOSE 8000
CMD ["gunicorn", "cobbler_site.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3", "--threads", "4"]
