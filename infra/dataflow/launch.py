"""Dataflow flex template entry point (``FLEX_TEMPLATE_PYTHON_PY_FILE``): submit the cleaning job and return.

The template launcher passes the template parameters (``metadata.json``) as ``--name=value`` flags plus the
Dataflow options (``--runner``, ``--project``, ``--region``, ``--temp_location``, ``--sdk_container_image``, ...).
``--no_wait`` makes :func:`newsclean.pipeline.launch.main` print the job id and exit once the job is submitted,
as a flex template launcher must; ``newsclean summarize OUT`` builds ``OUT/_summary.json`` after the job.
"""

import sys

from newsclean.pipeline.launch import main

if __name__ == "__main__":
    argv = sys.argv[1:]
    sys.exit(main(argv if "--no_wait" in argv else [*argv, "--no_wait"]))
