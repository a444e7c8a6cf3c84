"""Secrets never printed: URI passwords, secret parameters, bearer credentials, secret-named properties."""
import json
import logging

from icefloe.core.redact import RedactingFilter, redact, redact_properties


def test_redact_masks_secrets_and_keeps_the_rest():
    cases = {
        "catalog uri 'postgresql+psycopg://alice:S3cret@db.example:5432/cat': refused":
            "catalog uri 'postgresql+psycopg://alice:***@db.example:5432/cat': refused",
        "host=h password=S3cret dbname=x": "host=h password=*** dbname=x",
        "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.sig": "Authorization: Bearer ***",
        "https://acct.blob.core.windows.net/c/f?sv=2024&sig=AbC%3D&se=1":
            "https://acct.blob.core.windows.net/c/f?sv=2024&sig=***&se=1",
        "form client_secret=S3cret&scope=catalog": "form client_secret=***&scope=catalog",
    }
    for text, expected in cases.items():
        assert redact(text) == expected
    for plain in ("s3://bucket/wh/db/t/metadata/00001-x.metadata.json", "http://127.0.0.1:8181/v1/config",
                  "at 12:30:05 the table db.t had 3 rows", "a token must be kept as sha256:<digest>"):
        assert redact(plain) == plain


def test_secret_named_properties_are_masked():
    got = redact_properties({"s3.secret-access-key": "k", "s3.access-key-id": "AKIA1", "db.password": "p",
                             "added-records": "3", "source": "postgresql://u:pw@h/db"})
    assert got == {"s3.secret-access-key": "***", "s3.access-key-id": "AKIA1", "db.password": "***",
                   "added-records": "3", "source": "postgresql://u:***@h/db"}


def test_the_logging_filter_redacts_messages_and_traces():
    record = logging.LogRecord("x", logging.ERROR, __file__, 1, "connect to %s", ("mysql://u:pw@h/db",), None)
    try:
        raise ValueError("password=hunter2")
    except ValueError:
        import sys

        record.exc_info = sys.exc_info()
    RedactingFilter().filter(record)
    text = logging.Formatter().format(record)
    assert "mysql://u:***@h/db" in text and "password=***" in text and "hunter2" not in text and "pw@" not in text


def test_secret_named_items_of_a_dict_or_json_text_are_masked():
    """An error or log line may show a snapshot summary or properties as a dict or JSON."""
    summary = {"source.password": "S3cret", "s3.access-key-id": "AKIA1", "added-records": "3",
               "client_secret": "it's", "src": "mysql://u:pw@h/db"}
    assert redact(f"bad update: {summary}") == ("bad update: {'source.password': '***', 's3.access-key-id': 'AKIA1', "
                                                "'added-records': '3', 'client_secret': \"***\", "
                                                "'src': 'mysql://u:***@h/db'}")
    text = json.dumps({"action": "add-snapshot", "snapshot": {"summary": {"db.token": 'a\\"b', "operation": "append"}}})
    assert json.loads(redact(text))["snapshot"]["summary"] == {"db.token": "***", "operation": "append"}
    record = logging.LogRecord("icefloe.rest", logging.ERROR, __file__, 1, "POST /t: %s", (summary,), None)
    RedactingFilter().filter(record)
    assert "S3cret" not in record.getMessage() and "'source.password': '***'" in record.getMessage()
