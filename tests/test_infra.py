"""infra/ is checked, not prose: Kubernetes manifests against the Kubernetes OpenAPI schemas
(``kubernetes-validate``, strict: unknown fields fail), the FlinkDeployment's required fields by hand (the
Flink operator's CRD schema is not on PyPI), the newsclean command lines in the CronJob and the Airflow DAG
against newsclean's own parser, the flex template parameters against newsclean's Beam options, and the
Dockerfile's Beam/Python pins against the launcher's.
"""

from __future__ import annotations

import ast
import json
import re
import shlex
import sys
import tomllib
from pathlib import Path

import apache_beam
import kubernetes_validate
import pytest
import yaml
from apache_beam.options.pipeline_options import PipelineOptions

from newsclean.cli import build_parser
from newsclean.crawler.config import load_config
from newsclean.pipeline.options import NewscleanOptions, unknown_beam_flags
from newsclean.transforms.chain import CONFIGS

ROOT = Path(__file__).resolve().parent.parent
INFRA = ROOT / "infra"
K8S_VERSION = "1.33.0"  # the oldest Kubernetes the manifests target (CronJob timeZone: GA in 1.27)
FLINK_VERSIONS = {"v1_19", "v1_20", "v2_0", "v2_1"}  # Beam 2.77 job servers and the operator's FlinkVersion enum


def _docs(path: Path) -> list[dict]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def _by_kind(docs: list[dict], kind: str) -> list[dict]:
    return [d for d in docs if d["kind"] == kind]


def _check_newsclean_command(argv: list[str]) -> object:
    """Parse a newsclean command line as the CLI does; fail on flags neither newsclean nor Beam knows."""
    args, extras = build_parser().parse_known_args(argv)
    assert unknown_beam_flags(extras) == [], f"unknown flags in {argv}"
    return args


# --- Dockerfile --------------------------------------------------------------------------------


def test_dockerfile_pins_the_launchers_beam_and_python():
    text = (INFRA / "docker" / "Dockerfile").read_text()
    beam = re.search(r"^ARG BEAM_VERSION=(\S+)$", text, re.M).group(1)
    python = re.search(r"^ARG PYTHON_VERSION=(\S+)$", text, re.M).group(1)
    assert beam == apache_beam.__version__
    assert python == f"{sys.version_info.major}.{sys.version_info.minor}"
    assert "FROM apache/beam_python${PYTHON_VERSION}_sdk:${BEAM_VERSION}" in text
    assert f"python{python.replace('.', '')}-template-launcher-base" in text


def test_dockerfile_copies_every_product_folder():
    text = (INFRA / "docker" / "Dockerfile").read_text()
    copied = {m.group(1) for m in re.finditer(r"^COPY (\S+) ", text, re.M)}
    package_dirs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    for folder in package_dirs.values():
        top = folder.split("/")[0]
        assert top in copied, f"the image would miss {top}/ (pyproject package-dir)"
    for src in copied - {"--from=template_launcher"}:
        assert (ROOT / src).exists(), f"COPY {src}: no such path in the repository"


# --- Kubernetes manifests ------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["flink/flink-session.yaml", "k8s/cronjob.yaml"])
def test_core_manifests_validate_against_the_kubernetes_schemas(path):
    docs = _docs(INFRA / path)
    assert docs
    for doc in docs:
        if doc["kind"] == "FlinkDeployment":
            continue
        kubernetes_validate.validate(doc, K8S_VERSION, strict=True)  # raises ValidationError


def test_the_validator_rejects_a_broken_manifest():
    doc = _by_kind(_docs(INFRA / "k8s" / "cronjob.yaml"), "CronJob")[0]
    doc["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["volumeMount"] = []  # typo'd field
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(doc, K8S_VERSION, strict=True)


def test_flink_deployment_has_beams_job_server_and_worker_pool():
    docs = _docs(INFRA / "flink" / "flink-session.yaml")
    (flink,) = _by_kind(docs, "FlinkDeployment")
    assert flink["apiVersion"] == "flink.apache.org/v1beta1"
    spec = flink["spec"]
    assert spec["flinkVersion"] in FLINK_VERSIONS and spec["image"].startswith("flink:")
    for role in ("jobManager", "taskManager"):
        assert {"memory", "cpu"} <= set(spec[role]["resource"])
    assert "job" not in spec  # a session cluster: Beam's job server submits the pipelines
    pod = spec["taskManager"]["podTemplate"]
    kubernetes_validate.validate(pod, K8S_VERSION, strict=True)  # the pod template is a core Pod
    containers = {c["name"]: c for c in pod["spec"]["containers"]}
    assert "flink-main-container" in containers  # the operator merges the TaskManager into this one
    pool = containers["beam-worker-pool"]
    assert pool["args"] == ["--worker_pool"] and pool["ports"][0]["containerPort"] == 50000

    (job_server,) = [d for d in _by_kind(docs, "Deployment") if "job-server" in d["metadata"]["name"]]
    container = job_server["spec"]["template"]["spec"]["containers"][0]
    image_flink, image_beam = re.fullmatch(r"apache/beam_flink(\d+\.\d+)_job_server:(\S+)", container["image"]).groups()
    assert "v" + image_flink.replace(".", "_") == spec["flinkVersion"]
    assert image_beam == apache_beam.__version__
    # The versions infra/flink/local-cluster.sh runs (tests/test_flink_local.py): Flink's image, Beam's job server.
    pins = dict(line.split("=", 1) for line in (INFRA / "flink" / "versions.env").read_text().splitlines()
                if line and not line.startswith("#"))
    assert spec["image"] == f"flink:{pins['FLINK_VERSION']}-java17"
    assert (image_flink, image_beam) == (pins["FLINK_MINOR"], pins["BEAM_VERSION"])
    assert spec["flinkConfiguration"]["taskmanager.numberOfTaskSlots"] == "2"
    args = dict(a.lstrip("-").split("=", 1) for a in container["args"])
    assert args["flink-master"] == f"{flink['metadata']['name']}-rest:8081"  # the operator's REST service
    (service,) = _by_kind(docs, "Service")
    assert service["metadata"]["name"] == job_server["metadata"]["name"]
    assert {p["port"] for p in service["spec"]["ports"]} == {int(args["job-port"]), int(args["artifact-port"]),
                                                              int(args["expansion-port"])}
    claims = {d["metadata"]["name"] for d in _by_kind(docs, "PersistentVolumeClaim")}
    for volumes in (pod["spec"]["volumes"], job_server["spec"]["template"]["spec"]["volumes"]):
        assert {v["persistentVolumeClaim"]["claimName"] for v in volumes} <= claims


def test_cronjob_runs_an_incremental_newsclean_run_against_the_job_server():
    flink_docs = _docs(INFRA / "flink" / "flink-session.yaml")
    docs = _docs(INFRA / "k8s" / "cronjob.yaml")
    (cron,) = _by_kind(docs, "CronJob")
    assert cron["spec"]["concurrencyPolicy"] == "Forbid"
    container = cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]
    assert container["command"] == ["newsclean"]
    args = _check_newsclean_command(container["args"])
    assert args.command == "run" and args.incremental is True
    flags = dict(zip(container["args"][::1], container["args"][1:]))
    (service,) = _by_kind(flink_docs, "Service")
    host, port = flags["--job_endpoint"].split(":")
    assert host == service["metadata"]["name"] and int(port) in {p["port"] for p in service["spec"]["ports"]}
    assert flags["--environment_type"] == "EXTERNAL" and flags["--environment_config"] == "localhost:50000"
    (config_map,) = _by_kind(docs, "ConfigMap")
    mounted = {m["mountPath"] for m in container["volumeMounts"]}
    assert Path(args.config).parent.as_posix() in mounted


def test_cronjob_sites_config_loads(tmp_path):
    (config_map,) = _by_kind(_docs(INFRA / "k8s" / "cronjob.yaml"), "ConfigMap")
    path = tmp_path / "sites.toml"
    path.write_text(config_map["data"]["sites.toml"])
    config = load_config(path)
    assert config.sites and config.crawl.obey_robots


# --- Dataflow flex template ------------------------------------------------------------------------


def test_flex_template_parameters_are_newsclean_options():
    meta = json.loads((INFRA / "dataflow" / "metadata.json").read_text())
    samples = {"warc": "gs://b/warc/**/*.warc.gz", "out": "gs://b/clean", "neighbour_sample": "5",
               "chain": "paper", "incremental": "true"}
    params = {p["name"]: p for p in meta["parameters"]}
    assert set(params) == set(samples)
    assert {n for n, p in params.items() if not p.get("isOptional")} == {"warc", "out"}
    for name, value in samples.items():
        assert all(re.fullmatch(rx, value) for rx in params[name].get("regexes", [])), name
    # The template launcher passes --name=value: Beam's parser must take every one of them.
    view = PipelineOptions([f"--{n}={v}" for n, v in samples.items()]).view_as(NewscleanOptions)
    assert (view.warc, view.out, view.neighbour_sample, view.chain, view.incremental) == (
        samples["warc"], samples["out"], 5, "paper", True)
    chain_rx = params["chain"]["regexes"][0]
    assert {c for c in CONFIGS if re.fullmatch(chain_rx, c)} == set(CONFIGS)
    assert not re.fullmatch(chain_rx, "nonsense")


def test_flex_template_launcher_does_not_wait():
    source = (INFRA / "dataflow" / "launch.py").read_text()
    ast.parse(source)
    assert "--no_wait" in source
    assert "FLEX_TEMPLATE_PYTHON_PY_FILE=/template/launch.py" in (INFRA / "docker" / "Dockerfile").read_text()


# --- Airflow DAG ---------------------------------------------------------------------------------


def _module_constants(path: Path) -> dict[str, object]:
    """Module-level constants of a Python file (f-strings rendered with the constants seen so far)."""
    tree = ast.parse(path.read_text())
    found: dict[str, object] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                value = eval(compile(ast.Expression(node.value), str(path), "eval"), {}, dict(found))  # noqa: S307
            except Exception:  # noqa: BLE001 - not a constant
                continue
            found[node.targets[0].id] = value
    return found


def test_airflow_dag_commands_parse_and_match_the_flex_template():
    path = INFRA / "airflow" / "newsclean_dag.py"
    constants = _module_constants(path)

    def rendered(command: str) -> list[str]:  # Airflow renders the Jinja before bash splits the words
        return shlex.split(re.sub(r"\{\{\s*var\.value\.(\w+)\s*\}\}", r"\1", command))[1:]

    crawl = _check_newsclean_command(rendered(constants["CRAWL_COMMAND"]))
    assert crawl.command == "crawl"
    summarize = _check_newsclean_command(rendered(constants["SUMMARIZE_COMMAND"]))
    assert summarize.command == "summarize"
    source = path.read_text()
    template = json.loads((INFRA / "dataflow" / "metadata.json").read_text())
    names = {p["name"] for p in template["parameters"]}
    (params,) = [v for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Dict)
                 for k, v in zip(node.keys, node.values)
                 if isinstance(k, ast.Constant) and k.value == "parameters" and isinstance(v, ast.Dict)]
    used = {k.value for k in params.keys}
    assert used <= names and {"warc", "out", "incremental"} <= used
    assert "max_active_runs=1" in source
