"""Fetch the third-party data the scan tests read, once, into a cache
outside the repository ($DEVASSERT_THIRD_PARTY, default
~/.cache/devassert/third-party), and make a Hugging Face `datasets`
save_to_disk folder with the real `datasets` package in OUT_DIR.

- labelme 6.3.1's sdist: examples/semantic_segmentation/data_dataset_voc, VOC
  palette PNG masks (255 borders) and the same masks as int32 .npy (-1).
- plotly's package data: datasets/iris.csv.gz, whose species_id is 1-based.

usage: third_party.py OUT_DIR   (prints the paths as JSON)
"""
import gzip
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import zipfile

LABELME = "labelme==6.3.1"
PLOTLY = "plotly==7.1.0"
VOC = "labelme-6.3.1/examples/semantic_segmentation/data_dataset_voc"


def download(spec, binary, into):
    """One distribution file from the package index, without dependencies."""
    kind = "--only-binary" if binary else "--no-binary"
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", kind, ":all:", spec, "-d", into],
                   check=True, stdout=sys.stderr)
    (name,) = os.listdir(into)
    return os.path.join(into, name)


def cached(cache, name, make):
    """`cache/name`, made by `make(tmp_path)` when missing; renamed into place
    only when complete, so an interrupted fetch leaves nothing behind."""
    final = os.path.join(cache, name)
    if not os.path.exists(final):
        with tempfile.TemporaryDirectory(dir=cache) as tmp:
            made = make(tmp)
            os.replace(made, final)
    return final


def voc(tmp):
    sdist = download(LABELME, False, os.path.join(tmp, "dl"))
    with tarfile.open(sdist) as t:
        members = [m for m in t.getmembers() if m.name.startswith(VOC + "/")]
        try:
            t.extractall(os.path.join(tmp, "x"), members=members, filter="data")
        except TypeError:  # Python before 3.12 has no filters; these members are plain files
            t.extractall(os.path.join(tmp, "x"), members=members)
    return os.path.join(tmp, "x", VOC)


def iris(tmp):
    wheel = download(PLOTLY, True, os.path.join(tmp, "dl"))
    with zipfile.ZipFile(wheel) as z:
        data = gzip.decompress(z.read("plotly/package_data/datasets/iris.csv.gz"))
    out = os.path.join(tmp, "iris.csv")
    with open(out, "wb") as f:
        f.write(data)
    return out


def hf_dataset(out_dir):
    import datasets

    datasets.disable_progress_bars()
    rows = {"input_ids": [[5, 17, 31999], [1, 32000, 7, 9], [2, 3]], "label": [0, 1, 2]}
    path = os.path.join(out_dir, "hf_saved")
    datasets.Dataset.from_dict(rows).save_to_disk(path)
    return path


def main():
    out_dir = sys.argv[1]
    cache = os.environ.get("DEVASSERT_THIRD_PARTY") or os.path.expanduser("~/.cache/devassert/third-party")
    os.makedirs(cache, exist_ok=True)
    print(json.dumps({
        "voc": cached(cache, "labelme-6.3.1-voc", voc),
        "iris": cached(cache, "plotly-7.1.0-iris.csv", iris),
        "hf": hf_dataset(out_dir),
    }))


if __name__ == "__main__":
    main()
