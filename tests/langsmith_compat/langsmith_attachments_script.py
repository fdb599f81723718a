"""Written as LangSmith's how-to "evaluate with attachments" is (no model call, so it runs
offline): a dataset of examples with files, a target and evaluators that read them, and
an update that renames, keeps and adds files. Run with ``langsmith`` swapped for ``assay``."""

import struct
import zlib

from langsmith import Client
from langsmith.schemas import Attachment, ExampleUpsertWithAttachments


def png(width: int, height: int) -> bytes:
    """A blank PNG of that size (what a photo would be)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    pixels = zlib.compress(b"".join(b"\x00" + b"\xff" * width for _ in range(height)))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


client = Client()
dataset_name = "attachment-how-to"
dataset = client.create_dataset(dataset_name, description="Examples with files")

examples = [
    {
        "inputs": {"question": "How wide is the image?"},
        "outputs": {"answer": "64"},
        "attachments": {
            "my_img": {"mime_type": "image/png", "data": png(64, 32)},
            "notes": ("text/plain", b"a wide, blank image"),
        },
    },
    {
        "inputs": {"question": "How wide is the image?"},
        "outputs": {"answer": "16"},
        "attachments": {"my_img": Attachment(mime_type="image/png", data=png(16, 16))},
    },
]
created = client.create_examples(dataset_id=dataset.id, examples=examples)
print("created", created["count"])


def image_width(inputs: dict, attachments: dict) -> dict:
    data = attachments["my_img"]["reader"].read()
    width = struct.unpack(">I", data[16:20])[0]
    return {"answer": str(width)}


def correct(outputs: dict, reference_outputs: dict) -> bool:
    return outputs["answer"] == reference_outputs["answer"]


def is_png(attachments: dict) -> bool:
    # the target read this reader already: an evaluator reads the file again, whole
    return attachments["my_img"]["reader"].read().startswith(b"\x89PNG")


def has_url(attachments: dict) -> dict:
    url = attachments["my_img"]["presigned_url"]
    return {"key": "has_url", "score": bool(url)}


results = client.evaluate(
    image_width,
    data=dataset_name,
    evaluators=[correct, is_png, has_url],
    experiment_prefix="attachments",
)
for row in sorted(results, key=lambda r: r["run"].outputs["answer"]):
    scores = sorted((r.key, r.score) for r in row["evaluation_results"]["results"])
    print(row["run"].outputs["answer"], scores)

first_id, second_id = created["example_ids"]
client.update_examples(
    dataset_id=dataset.id,
    updates=[
        {
            "id": first_id,
            "attachments_operations": {"rename": {"my_img": "renamed_img"}, "retain": []},
            "attachments": {"caption": ("text/plain", b"64 by 32")},
        }
    ],
)
updated = client.read_example(first_id)
for name, attachment in sorted(updated.attachments.items()):
    print(name, attachment["mime_type"], len(attachment["reader"].read()))

client.upsert_examples_multipart(
    upserts=[
        ExampleUpsertWithAttachments(
            dataset_id=dataset.id,
            inputs={"question": "How wide is the image?"},
            outputs={"answer": "8"},
            attachments={"my_img": ("image/png", png(8, 8))},
        )
    ]
)
for example in client.list_examples(dataset_id=dataset.id):
    print(example.outputs["answer"], sorted(example.attachments))
