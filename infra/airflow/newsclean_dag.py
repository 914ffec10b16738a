"""Airflow DAG: scheduled crawl -> clean on Dataflow (flex template) -> summary, every 6 hours.

    crawl (newsclean crawl on the Airflow worker, new pages only) ─► upload WARC files to gs://
      ─► clean (Dataflow flex template infra/dataflow/metadata.json, --incremental: only WARC files not yet
         in the corpus manifest, appended, deduplicated against the corpus)
      ─► summarize (newsclean summarize OUT: OUT/_summary.json from the outputs; fails on an accounting mismatch)

The flex template launcher submits the job and returns its id (``--no_wait``); the operator then polls
Dataflow until the job is done (``wait_until_finished=True``), so no Airflow worker slot holds the job.
Needs ``apache-airflow-providers-google`` and, on the worker, ``pip install newsclean`` and ``gcloud``.
Set the Airflow Variables ``newsclean_bucket``, ``newsclean_project`` and ``newsclean_region``.
The command strings are module constants so that tests/test_infra.py can check them against newsclean's
parser without Airflow installed.
"""

from __future__ import annotations

import pendulum
from airflow import DAG
from airflow.operators.bash import BashOperator
from airflow.providers.google.cloud.operators.dataflow import DataflowStartFlexTemplateOperator

BUCKET = "{{ var.value.newsclean_bucket }}"
WARC_DIR = "/var/lib/newsclean/warc"
#: newsclean crawl: only pages not yet fetched (the crawl store beside the WARC files), into WARC_DIR.
CRAWL_COMMAND = "newsclean crawl --config /etc/newsclean/sites.toml --out /var/lib/newsclean/warc"
UPLOAD_COMMAND = f"gcloud storage rsync --recursive {WARC_DIR} gs://{BUCKET}/warc"
#: After the Dataflow job: the run summary from the outputs (exit 1 on an accounting mismatch).
SUMMARIZE_COMMAND = f"newsclean summarize gs://{BUCKET}/clean"

with DAG(
    dag_id="newsclean_crawl_clean",
    schedule="17 */6 * * *",
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    max_active_runs=1,  # the corpus manifest and the crawl store are written by one run at a time
    default_args={"retries": 1, "retry_delay": pendulum.duration(minutes=10)},
    tags=["newsclean"],
) as dag:
    crawl = BashOperator(task_id="crawl", bash_command=CRAWL_COMMAND)
    upload = BashOperator(task_id="upload_warc", bash_command=UPLOAD_COMMAND)
    clean = DataflowStartFlexTemplateOperator(
        task_id="clean",
        project_id="{{ var.value.newsclean_project }}",
        location="{{ var.value.newsclean_region }}",
        wait_until_finished=True,
        body={
            "launchParameter": {
                "jobName": "newsclean-clean-{{ ts_nodash | lower }}",
                "containerSpecGcsPath": f"gs://{BUCKET}/templates/newsclean-clean.json",
                "parameters": {
                    "warc": f"gs://{BUCKET}/warc/**/*.warc.gz",
                    "out": f"gs://{BUCKET}/clean",
                    "incremental": "true",
                },
                "environment": {"tempLocation": f"gs://{BUCKET}/tmp", "maxWorkers": 20},
            }
        },
    )
    summarize = BashOperator(task_id="summarize", bash_command=SUMMARIZE_COMMAND)
    crawl >> upload >> clean >> summarize
