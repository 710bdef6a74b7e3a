"""A schemathesis hook module (SCHEMATHESIS_HOOKS=shoal_statuses): records the status of every
response, by operation, in the JSON-lines file $SHOAL_FUZZ_STATUSES for report.py."""

import json
import os
import threading

import schemathesis

_lock = threading.Lock()


@schemathesis.hook
def after_call(context, case, response):
    line = json.dumps({"operation": case.operation.label, "status": response.status_code})
    with _lock, open(os.environ["SHOAL_FUZZ_STATUSES"], "a") as out:
        out.write(line + "\n")
