"""`evaldsl upload RECORD URL`: send a stored run record to a server.

Argument parsing only; `report._upload.upload_record` does the work (POST,
bearer token from ``$EVALDSL_UPLOAD_TOKEN``, idempotency key, retries).
Unlike ``run --upload``, where a failed upload is only a warning, this
command exists to upload, so it exits 1 when the upload fails (and 4 when
the record cannot be read). The record file is only read.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from . import positive_float, positive_int

ATTEMPTS, TIMEOUT_S, TOKEN_ENV = 4, 30.0, "EVALDSL_UPLOAD_TOKEN"
"""`report._upload`'s defaults, repeated so that building the parser imports nothing more (a test keeps
them equal)."""


def add_upload_command(sub: Any) -> None:
    p = sub.add_parser(
        "upload", help="POST a run record to a server (bearer token from $EVALDSL_UPLOAD_TOKEN)",
        description=f"POST a run record as JSON to URL, with Authorization: Bearer ${TOKEN_ENV} when it is "
                    "set and an Idempotency-Key made from the record's suites, agent and start time; "
                    "retried with backoff on 429, 5xx, timeouts and connection errors.",
        epilog="exit codes: 0 uploaded; 1 the upload failed; 4 unreadable record or bad option.",
    )
    p.add_argument("record", metavar="RECORD", help="a run record (.json)")
    p.add_argument("url", metavar="URL", help="where to POST it (http or https)")
    p.add_argument("--attempts", type=positive_int, default=ATTEMPTS, metavar="N",
                   help=f"tries in all (default {ATTEMPTS})")
    p.add_argument("--timeout", type=positive_float, default=TIMEOUT_S, metavar="SECONDS",
                   help=f"per attempt (default {TIMEOUT_S:g})")
    p.set_defaults(func=cmd_upload)


def cmd_upload(args: argparse.Namespace) -> int:
    from ..report._json import RecordError, read_record
    from ..report._upload import print_upload, upload_record

    try:
        report = read_record(args.record)
    except RecordError as exc:
        print(f"evaldsl: {exc}", file=sys.stderr)
        return 4
    result = upload_record(report, args.url, attempts=args.attempts, timeout=args.timeout)
    print_upload(result)
    return 0 if result.ok else 1
