"""Starting points for the model form (OpenAI, vLLM, Ollama, llama.cpp, the simulator) and the
simulator's model-string help, generated from judging.simulator.behaviour so it cannot drift.

A preset fills the endpoint fields and limits only; the model name and prices are the
researcher's (prices change, and a wrong typed-in price is worse than an empty one).
"""

from __future__ import annotations

import json
import re
from dataclasses import MISSING, asdict, dataclass, fields
from typing import Any

from django.conf import settings

from judging.simulator import behaviour
from judging.vocabulary import Transport


@dataclass(frozen=True)
class Preset:
    key: str
    label: str
    base_url: str
    transport: str
    model: str  # shown as the model field's placeholder (an example, not a choice)
    max_concurrency: int
    requests_per_minute: int  # 0 = no limit
    tokens_per_minute: int  # 0 = no limit
    request_timeout: float
    api_key_env: str
    note: str
    fills_model: bool = False  # the simulator's model string is its configuration: fill it in

    def fields(self) -> dict[str, Any]:
        """What the form's JavaScript writes into the form's fields."""
        data = asdict(self)
        for shown in ("key", "label", "note", "fills_model", "model"):
            data.pop(shown)
        if self.fills_model:
            data["model"] = self.model
        return data

    def fields_json(self) -> str:
        return json.dumps(self.fields(), sort_keys=True)


def presets() -> list[Preset]:
    prefix = settings.JUDGE_KEY_ENV_PREFIX
    return [
        Preset(
            "openai",
            "OpenAI",
            "https://api.openai.com/v1",
            Transport.OPENAI,
            "gpt-4o-mini",
            8,
            500,
            200_000,
            60.0,
            f"{prefix}OPENAI",
            f"Set {prefix}OPENAI in the workers' environment (or type the key: it is stored encrypted); "
            "copy your tier's RPM/TPM and prices from the OpenAI dashboard.",
        ),
        Preset(
            "vllm",
            "vLLM",
            "http://localhost:8000/v1",
            Transport.HTTP,
            "meta-llama/Llama-3.1-8B-Instruct",
            32,
            0,
            0,
            60.0,
            "",
            "`vllm serve MODEL --port 8000`; the model is the name vLLM serves (GET /v1/models). "
            "No key unless started with --api-key.",
        ),
        Preset(
            "ollama",
            "Ollama",
            "http://localhost:11434/v1",
            Transport.HTTP,
            "llama3.1:8b",
            4,
            0,
            0,
            120.0,
            "",
            "`ollama pull llama3.1:8b`; the model is the Ollama tag. Ollama answers OLLAMA_NUM_PARALLEL "
            "requests at once, so keep concurrency near it. No key.",
        ),
        Preset(
            "llamacpp",
            "llama.cpp server",
            "http://localhost:8080/v1",
            Transport.HTTP,
            "local",
            4,
            0,
            0,
            120.0,
            "",
            "`llama-server -m model.gguf --port 8080 --parallel 4`; it serves one model and ignores the "
            "model name. No key unless started with --api-key.",
        ),
        Preset(
            "simulator",
            "Simulator",
            settings.SIMULATOR_BASE_URL,
            Transport.HTTP,
            "sim:seed=1",
            16,
            0,
            0,
            30.0,
            "",
            "The project's own simulated judge: no key, no cost, deterministic answers set by the knobs "
            "in the model name (see the help below).",
            fills_model=True,
        ),
    ]


@dataclass(frozen=True)
class Knob:
    name: str
    kind: str  # "int" | "float" | "str"
    default: Any
    meaning: str


_ROW = re.compile(r"^(\w+)\s{2,}\S+\s{2,}(.*)$")
_LONG = 110


def _meanings() -> dict[str, str]:
    """Knob -> meaning, read from the table in behaviour's docstring (the simulator's own docs)."""
    meanings: dict[str, list[str]] = {}
    current = ""
    for line in (behaviour.__doc__ or "").splitlines():
        if line.startswith("="):
            current = ""
            continue
        match = _ROW.match(line)
        if match and match.group(1) in {f.name for f in fields(behaviour.Knobs)}:
            current = match.group(1)
            meanings[current] = [match.group(2).strip()]
        elif current and line.startswith(" ") and line.strip():
            meanings[current].append(line.strip())
    return {name: _one_line(" ".join(parts)) for name, parts in meanings.items()}


def _one_line(text: str) -> str:
    """Cut a long meaning at its first clause, so every knob fits on one line."""
    text = text.replace("``", "")
    if len(text) <= _LONG:
        return text
    clause = [i for i in (text.find("; "), text.find(": ")) if i > 0]
    if clause:
        return text[: min(clause)]
    aside = text.find(" (", 30)
    return text[:aside] if aside > 0 else text[:_LONG]


def simulator_knobs() -> list[Knob]:
    meanings = _meanings()
    out = []
    for f in fields(behaviour.Knobs):
        default = f.default if f.default is not MISSING else None
        meaning = meanings.get(f.name, "")
        if f.name == "style":
            meaning = f"{meaning}; one of {', '.join(behaviour.STYLES)}" if meaning else ", ".join(behaviour.STYLES)
        elif f.name == "errors":
            meaning = f"kinds drawn uniformly when a call fails, a '+'-list of {', '.join(behaviour.ERROR_KINDS)}"
        out.append(Knob(f.name, str(f.type), default, meaning))
    return out


def simulator_example() -> str:
    return "sim:order_first=0.3,bandwagon=0.5,invalid=0.05,latency_ms=50,seed=1"
