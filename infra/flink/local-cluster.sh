#!/usr/bin/env bash
# A standalone Flink cluster on 127.0.0.1 (one JobManager, one TaskManager with 2 slots) and a Beam SDK worker
# pool beside it, from pinned packages (infra/flink/versions.env), for running `newsclean clean --runner FlinkRunner`.
#
#   infra/flink/local-cluster.sh fetch             Flink (PyPI, SHA-256 checked) and Beam's Flink job server (Maven)
#   infra/flink/local-cluster.sh fetch-flink       Flink only
#   infra/flink/local-cluster.sh fetch-job-server  the job server jar only; exit 3 when the registry does not serve it
#   infra/flink/local-cluster.sh start             fetch-flink, then JobManager + TaskManager + worker pool
#   infra/flink/local-cluster.sh stop              stop all three (no process of this cluster is left)
#   infra/flink/local-cluster.sh status            what runs; exit 1 when nothing does
#   infra/flink/local-cluster.sh flags             the Beam flags of a run on this cluster
#
# Settings (environment):
#   NEWSCLEAN_INFRA_CACHE  downloads, unpacked Flink, the jar (default ~/.cache/newsclean-infra; .ci/run reuses it)
#   NEWSCLEAN_FLINK_STATE  this cluster's config, logs and pid files (default $NEWSCLEAN_INFRA_CACHE/flink-local)
#   FLINK_REST_PORT (8081), FLINK_RPC_PORT (6123), BEAM_WORKER_POOL_PORT (50000)
#   FLINK_TM_MEMORY (1280m: taskmanager.memory.process.size), FLINK_JM_MEMORY (1024m), FLINK_SLOTS (2)
#   PYTHON  the interpreter whose Beam the worker pool runs (default: the repository's .venv/bin/python); the pool
#           starts SDK workers with the `python` on PATH, so this interpreter's folder goes first on the pool's PATH.
# Needs Java 11+ (17 tested) on PATH or in JAVA_HOME, and pip; `fetch-job-server` needs Maven (mvn).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
# shellcheck source=versions.env
. "$HERE/versions.env"

CACHE="${NEWSCLEAN_INFRA_CACHE:-$HOME/.cache/newsclean-infra}"
STATE="${NEWSCLEAN_FLINK_STATE:-$CACHE/flink-local}"
REST_PORT="${FLINK_REST_PORT:-8081}"
RPC_PORT="${FLINK_RPC_PORT:-6123}"
POOL_PORT="${BEAM_WORKER_POOL_PORT:-50000}"
TM_MEMORY="${FLINK_TM_MEMORY:-1280m}"
JM_MEMORY="${FLINK_JM_MEMORY:-1024m}"
SLOTS="${FLINK_SLOTS:-2}"
if [ -z "${PYTHON:-}" ]; then
  if [ -x "$REPO/.venv/bin/python" ]; then PYTHON="$REPO/.venv/bin/python"; else PYTHON="$(command -v python3)"; fi
fi
FLINK_HOME="$CACHE/flink-$FLINK_VERSION"
JOB_SERVER_JAR="$CACHE/jars/beam-runners-flink-$FLINK_MINOR-job-server-$BEAM_VERSION.jar"
export FLINK_CONF_DIR="$STATE/conf" FLINK_LOG_DIR="$STATE/log" FLINK_PID_DIR="$STATE/pid"

die() { echo "local-cluster.sh: $*" >&2; exit "${EXIT:-1}"; }

check_sha256() {  # FILE EXPECTED: exit 1 with both digests when they differ
  local got
  got="$(sha256sum "$1" | cut -d' ' -f1)"
  [ "$got" = "$2" ] || die "SHA-256 of $1 is $got, expected $2"
}

need_java() {
  if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ]; then return; fi
  command -v java >/dev/null || EXIT=2 die "no java on PATH and no JAVA_HOME (Flink needs Java 11+; 17 tested)"
}

fetch_flink() {
  [ -f "$FLINK_HOME/.complete" ] && return
  local dl="$CACHE/downloads"
  mkdir -p "$dl"
  if [ ! -f "$dl/$FLINK_WHEEL" ]; then
    "$PYTHON" -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.11 --implementation cp \
      --platform manylinux2014_x86_64 -d "$dl" "apache-flink==$FLINK_VERSION"
  fi
  if [ ! -f "$dl/$FLINK_LIBRARIES" ]; then
    "$PYTHON" -m pip download --quiet --no-deps --no-binary=:all: --no-build-isolation -d "$dl" \
      "apache-flink-libraries==$FLINK_VERSION"
  fi
  check_sha256 "$dl/$FLINK_WHEEL" "$FLINK_WHEEL_SHA256"
  check_sha256 "$dl/$FLINK_LIBRARIES" "$FLINK_LIBRARIES_SHA256"
  local tmp="$FLINK_HOME.tmp"
  rm -rf "$tmp" && mkdir -p "$tmp"
  # bin/ and conf/ from the wheel; lib/ (flink-dist and the other jars) and bin/bash-java-utils.jar from the
  # libraries' sdist.
  "$PYTHON" - "$dl/$FLINK_WHEEL" "$tmp" <<'EOF'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    for name in z.namelist():
        for part in ("bin", "conf"):
            if name.startswith(f"pyflink/{part}/") and not name.endswith("/"):
                target = f"{sys.argv[2]}/{name[len('pyflink/'):]}"
                __import__("pathlib").Path(target).parent.mkdir(parents=True, exist_ok=True)
                with open(target, "wb") as out:
                    out.write(z.read(name))
EOF
  chmod +x "$tmp"/bin/*
  tar -xzf "$dl/$FLINK_LIBRARIES" -C "$tmp" --strip-components=2 "apache_flink_libraries-$FLINK_VERSION/deps/lib" \
    "apache_flink_libraries-$FLINK_VERSION/deps/bin/bash-java-utils.jar"
  rm -rf "$FLINK_HOME" && mv "$tmp" "$FLINK_HOME" && touch "$FLINK_HOME/.complete"
}

fetch_job_server() {
  [ -f "$JOB_SERVER_JAR" ] && { verify_job_server; return; }
  command -v mvn >/dev/null || EXIT=3 die "no mvn on PATH: cannot fetch Beam's Flink job server"
  local artifact="org.apache.beam:beam-runners-flink-$FLINK_MINOR-job-server:$BEAM_VERSION:jar" log
  mkdir -p "$CACHE/jars"
  log="$(mktemp)"
  if ! mvn -B -q -C -U -Dstyle.color=never dependency:copy -Dartifact="$artifact" -DoutputDirectory="$CACHE/jars" >"$log" 2>&1; then
    echo "local-cluster.sh: mvn dependency:copy -Dartifact=$artifact failed:" >&2
    { grep -m1 "ERROR" "$log" || tail -5 "$log"; } | sed 's/\x1b\[[0-9;]*m//g' >&2  # without Maven's colour codes
    rm -f "$log"
    EXIT=3 die "Beam's Flink job server $artifact is not available"
  fi
  rm -f "$log"
  verify_job_server
}

verify_job_server() {
  if [ -n "$BEAM_FLINK_JOB_SERVER_SHA256" ]; then
    check_sha256 "$JOB_SERVER_JAR" "$BEAM_FLINK_JOB_SERVER_SHA256"
  else
    echo "local-cluster.sh: $JOB_SERVER_JAR: no pinned SHA-256 (versions.env), Maven's checksum only;" \
         "sha256 $(sha256sum "$JOB_SERVER_JAR" | cut -d' ' -f1)" >&2
  fi
}

write_conf() {
  mkdir -p "$FLINK_CONF_DIR" "$FLINK_LOG_DIR" "$FLINK_PID_DIR"
  cp "$FLINK_HOME/conf/log4j.properties" "$FLINK_HOME/conf/log4j-console.properties" \
     "$FLINK_HOME/conf/log4j-cli.properties" "$FLINK_CONF_DIR/"
  # Flink's shipped config.yaml (its Java 17 --add-opens flags included) with the loopback addresses, ports,
  # memory and slots of this cluster set on top.
  "$PYTHON" - "$FLINK_HOME/conf/config.yaml" "$FLINK_CONF_DIR/config.yaml" <<EOF
import sys, yaml
conf = yaml.safe_load(open(sys.argv[1]))
settings = {
    "jobmanager.rpc.address": "127.0.0.1", "jobmanager.rpc.port": $RPC_PORT, "jobmanager.bind-host": "127.0.0.1",
    "jobmanager.memory.process.size": "$JM_MEMORY",
    "taskmanager.host": "127.0.0.1", "taskmanager.bind-host": "127.0.0.1",
    "taskmanager.numberOfTaskSlots": $SLOTS, "taskmanager.memory.process.size": "$TM_MEMORY",
    "parallelism.default": $SLOTS,
    "rest.address": "127.0.0.1", "rest.bind-address": "127.0.0.1", "rest.port": $REST_PORT,
    "io.tmp.dirs": "$STATE/tmp", "env.pid.dir": "$FLINK_PID_DIR", "env.log.dir": "$FLINK_LOG_DIR",
}
for dotted, value in settings.items():
    node, *path, last = [conf, *dotted.split(".")]
    for key in path:
        node = node.setdefault(key, {})
    node[last] = value
yaml.safe_dump(conf, open(sys.argv[2], "w"), default_flow_style=False)
EOF
  mkdir -p "$STATE/tmp"
}

pids() {  # the pids recorded for this cluster (Flink's daemons and the worker pool) that are alive
  local f p
  for f in "$FLINK_PID_DIR"/*.pid; do
    [ -f "$f" ] || continue
    while read -r p; do
      [ -n "$p" ] && kill -0 "$p" 2>/dev/null && echo "$p"
    done <"$f"
  done
  return 0
}

wait_rest() {  # until the REST API lists a TaskManager with its slots (120 s)
  "$PYTHON" - "$REST_PORT" "$SLOTS" <<'EOF'
import json, sys, time, urllib.request
url, end = f"http://127.0.0.1:{sys.argv[1]}/overview", time.monotonic() + 120
while time.monotonic() < end:
    try:
        view = json.load(urllib.request.urlopen(url, timeout=2))
        if view.get("taskmanagers", 0) >= 1 and view.get("slots-total", 0) >= int(sys.argv[2]):
            print(f"flink {view.get('flink-version')}: {view['taskmanagers']} TaskManager, {view['slots-total']} slots")
            sys.exit(0)
    except OSError:
        pass
    time.sleep(0.5)
sys.exit(f"no TaskManager registered at {url} after 120 s")
EOF
}

start_pool() {
  local bin
  bin="$(dirname "$PYTHON")"
  # Own session (setsid), so that `stop` ends the pool and the SDK worker processes it started together.
  PATH="$bin:$PATH" setsid "$PYTHON" -m apache_beam.runners.worker.worker_pool_main --service_port "$POOL_PORT" \
    >"$FLINK_LOG_DIR/worker-pool.log" 2>&1 </dev/null &
  echo $! >"$FLINK_PID_DIR/beam-worker-pool.pid"
  "$PYTHON" - "$POOL_PORT" <<'EOF'
import socket, sys, time
end = time.monotonic() + 60
while time.monotonic() < end:
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=1).close()
        sys.exit(0)
    except OSError:
        time.sleep(0.2)
sys.exit(f"no worker pool listens on 127.0.0.1:{sys.argv[1]} after 60 s")
EOF
}

cmd_start() {
  need_java
  [ -z "$(pids)" ] || die "already running (pids $(pids | tr '\n' ' ')): stop it first"
  fetch_flink
  write_conf
  "$FLINK_HOME/bin/jobmanager.sh" start >/dev/null
  "$FLINK_HOME/bin/taskmanager.sh" start >/dev/null
  wait_rest || { tail -20 "$FLINK_LOG_DIR"/*.log >&2 || true; cmd_stop; die "the cluster did not start"; }
  start_pool || { cmd_stop; die "the worker pool did not start (log: $FLINK_LOG_DIR/worker-pool.log)"; }
  echo "started: REST http://127.0.0.1:$REST_PORT, worker pool 127.0.0.1:$POOL_PORT, state $STATE"
}

cmd_stop() {
  local f p pgid
  if [ -f "$FLINK_HOME/bin/taskmanager.sh" ]; then
    "$FLINK_HOME/bin/taskmanager.sh" stop-all >/dev/null 2>&1 || true
    "$FLINK_HOME/bin/jobmanager.sh" stop-all >/dev/null 2>&1 || true
  fi
  f="$FLINK_PID_DIR/beam-worker-pool.pid"
  if [ -f "$f" ]; then
    p="$(cat "$f")"
    pgid="$(ps -o pgid= -p "$p" 2>/dev/null | tr -d ' ' || true)"
    if [ "$pgid" = "$p" ]; then kill -TERM -- "-$p" 2>/dev/null || true; else kill -TERM "$p" 2>/dev/null || true; fi
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    if [ "$pgid" = "$p" ]; then kill -KILL -- "-$p" 2>/dev/null || true; else kill -KILL "$p" 2>/dev/null || true; fi
    rm -f "$f"
  fi
  for p in $(pids); do kill -KILL "$p" 2>/dev/null || true; done  # a daemon that outlived Flink's own stop
  [ -z "$(pids)" ] || die "still running after stop: $(pids | tr '\n' ' ')"
  echo "stopped"
}

cmd_status() {
  local running
  running="$(pids | tr '\n' ' ')"
  [ -n "$running" ] || { echo "not running (state $STATE)"; return 1; }
  echo "running: pids $running(REST http://127.0.0.1:$REST_PORT, worker pool 127.0.0.1:$POOL_PORT)"
}

cmd_flags() {
  echo "--runner FlinkRunner --flink_master 127.0.0.1:$REST_PORT --flink_version $FLINK_MINOR" \
       "--flink_job_server_jar $JOB_SERVER_JAR --environment_type EXTERNAL --environment_config 127.0.0.1:$POOL_PORT"
}

case "${1:-}" in
  fetch) fetch_flink; fetch_job_server ;;
  fetch-flink) fetch_flink ;;
  fetch-job-server) fetch_job_server ;;
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  flags) cmd_flags ;;
  *) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
