"""A small dataset for the site's tests: released twice, with a series, nested examination
findings, attachments (an image and a PDF), a withdrawal, and an unreleased edit."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

from casebank.cli import main
from gitrepo import BOB, GitRepo, case_text, dataset

DIAGNOSIS = "Acute inferior ST-elevation myocardial infarction"
# Texts only the examiner view may hold (from the fixture case).
EXAMINER_TEXTS = (
    DIAGNOSIS,
    "Aortic dissection",  # the differential
    "Inferior STEMI",  # an accepted answer
    "Discharging the patient",  # a critical safety error
    "Onset, character, radiation of the pain",  # a must-ask checklist item
    "Primary PCI",  # the treatment plan
)
TITLES = {"alpha": "Crushing pain at the bus stop", "beta": "Case beta", "gamma": "Case gamma"}

_SERIES = """    hs-troponin:
      type: lab_value
      series:
        - {at: "on arrival", value: 24, unit: ng/L, reference_range: "<14", flag: high}
        - {at: "3 hours later", value: 1480, unit: ng/L, reference_range: "<14", flag: high}
        - {at: "12 hours later", value: 3650, unit: ng/L, reference_range: "<14", flag: high,
           note: "Peak value."}
"""
_EXAM = """physical_exam:
  general: "Pale, sweaty, in pain"
  vital signs:
    heart rate: {value: 88, unit: /min, reference_range: "60–100", flag: normal}
    blood pressure: {value: "146/88", unit: mmHg, flag: high}
  neurological:
    upper limbs:
      right: {power: "5/5", reflexes: "normal"}
"""


def rich_case(case_id: str, title: str) -> str:
    """The fixture case with a series, nested examination sections and attachments."""
    text = case_text(case_id, title)
    start = text.index("    hs-troponin:\n")
    end = text.index("    Complete blood count:\n")
    text = text[:start] + _SERIES + text[end:]
    start, end = text.index("physical_exam:\n"), text.index("ground_truth:\n")
    text = text[:start] + _EXAM + text[end:]
    return text.replace(
        '      value: "ST elevation in II, III and aVF."\n',
        '      value: "ST elevation in II, III and aVF."\n'
        "      attachments: [ecg-12-lead.png, report.pdf]\n",
        1,
    )


def tiny_png() -> bytes:
    """A valid 2x2 PNG, so that the browser really decodes the attachment."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + b"\x0b\x53\x94" * 2 for _ in range(2))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def released_dataset(root: Path) -> GitRepo:
    """alpha, beta, gamma released in 1.0.0; alpha retitled and gamma removed in 2.0.0;
    beta@1 withdrawn in 2.0.0; then an unreleased edit of alpha in the working tree."""
    repo = dataset(
        root, {c: rich_case(c, t) if c == "alpha" else case_text(c, t) for c, t in TITLES.items()}
    )
    repo.write("cases/alpha/attachments/ecg-12-lead.png", tiny_png())
    repo.write("cases/alpha/attachments/report.pdf", b"%PDF-1.4\n% a stand-in report\n")
    repo.commit("Attach the ECG and its report")
    assert main(["release", "--root", str(repo.root), "1.0.0"]) == 0
    repo.write("cases/alpha.yaml", rich_case("alpha", "Crushing pain at the bus stop, revised"))
    repo.delete("cases/gamma.yaml")
    repo.commit("Retitle alpha, retire gamma\n\nReviewed-by: Cara <cara@example.org>", author=BOB)
    reason = "The troponin units were wrong in this version of the case."
    assert main(["withdraw", "--root", str(repo.root), "beta@1", "--reason", reason]) == 0
    repo.commit("Withdraw beta@1")
    assert main(["release", "--root", str(repo.root), "2.0.0"]) == 0
    repo.write("cases/alpha.yaml", rich_case("alpha", "Crushing pain at the bus stop, draft"))
    return repo
