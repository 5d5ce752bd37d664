#!/usr/bin/python3
"""Writes the seed corpora of the fuzz targets into tests/fuzz/corpus/<target>/ (the files are committed;
rerun this after changing it). A seed named ok-* must be accepted by its target and bad-* refused: the
fuzz_corpus.* CTest tests check that. Seeds come from the shipped scenarios and profiles, changed by hand in
the ways issue 11 lists, and from tiny IDX files written byte by byte. Files named bad-found-* are inputs
libFuzzer saved when `make fuzz` found a problem (copied from build-fuzz/fuzz-work/<target>/artifacts/ once
fixed); the regress-* seeds written here are their minimal forms."""
import pathlib
import shutil
import struct

ROOT = pathlib.Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "fuzz" / "corpus"


def write(target, name, data):
    if isinstance(data, str):
        data = data.encode("utf-8")
    path = CORPUS / target / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def text(relative):
    return (ROOT / relative).read_text(encoding="utf-8")


def ini_seeds():
    quick = text("scenarios/quickstart.ini")
    write("ini", "ok-quickstart.ini", quick)
    write("ini", "ok-two_sites.ini", text("scenarios/two_sites.ini"))
    write("ini", "ok-mixed_cluster.ini", text("scenarios/mixed_cluster.ini"))
    write("ini", "ok-crlf.ini", quick.replace("\n", "\r\n"))
    write("ini", "ok-utf8-bom.ini", "\ufeff" + quick)
    write("ini", "ok-spaced-header.ini", "[ training ]\nstrategy = sync\n[\tcluster\t] # tabs\nworkers = 8\n")
    write("ini", "ok-utf8-comment.ini", "[run]\n# 元 per GPU-hour, 1.3 µs\nname = a × b\n")
    write("ini", "bad-cr-only.ini", quick.replace("\n", "\r"))
    write("ini", "bad-stray-cr.ini", "[run]\nname = a\rb\n")
    write("ini", "bad-nul.ini", b"[run]\nname = quick\0start\n")
    write("ini", "bad-escape.ini", "[run]\nname = \x1b[31mred\x1b[0m\n")
    write("ini", "bad-c1-csi.ini", "[run]\nname = \u009b2J\n")
    write("ini", "bad-latin1.ini", b"[fabric]\nlink_latency = 1.3 \xb5s\n")
    write("ini", "bad-utf16le-bom.ini", b"\xff\xfe" + "[run]\nname = a\n".encode("utf-16-le"))
    write("ini", "bad-utf16be.ini", "[run]\nname = a\n".encode("utf-16-be"))
    write("ini", "bad-utf32.ini", "[run]\nname = a\n".encode("utf-32"))
    write("ini", "bad-malformed-header.ini", "[cluster\nworkers = 8\n")
    write("ini", "bad-outside-section.ini", "workers = 8\n[cluster]\n")
    write("ini", "bad-duplicate.ini", "[cluster]\nworkers = 8\nworkers = 4\n")
    write("ini", "bad-no-equals.ini", "[cluster]\nworkers 8\n")
    write("ini", "bad-section-name.ini", "[my cluster]\nworkers = 8\n")
    # Found by fuzz_ini: a tab quoted raw in an error message.
    write("ini", "bad-regress-tab-in-header.ini", "[run]\n[\tclus\n")
    write("ini", "bad-regress-tab-in-key.ini", "[run]\na\tb = 1\n")


def units_seeds():
    ok = ["200Gbps", "25 GB/s", "1.3us", "1.3\u00b5s", "312TFLOPS", "4MiB", "400W", "1e9s", ".5ms", "0B",
          "9007199254740992B"]
    bad = ["200", "1e30B", "1e308TB", "1e400Gbps", "inf B", "nan s", "0x10GB", "1e-400s", "\x1b[31m5GB", "",
           "5 EB", "-1e30B"]
    for i, value in enumerate(ok):
        write("units", f"ok-{i:02d}", value)
    for i, value in enumerate(bad):
        write("units", f"bad-{i:02d}", value)


def profile_seeds():
    a100 = text("network_profiles/gpu/a100-40gb.ini")
    hdr = text("network_profiles/fabric/ib-hdr-200.ini")
    write("profile", "ok-a100-40gb", "g" + a100)
    write("profile", "ok-h100-80gb", "g" + text("network_profiles/gpu/h100-80gb.ini"))
    write("profile", "ok-ib-hdr-200", "f" + hdr)
    write("profile", "ok-eth-10g-tcp", "f" + text("network_profiles/fabric/eth-10g-tcp.ini"))
    write("profile", "ok-a100-crlf-bom-spaced", "g\ufeff" + a100.replace("[gpu]", "[ gpu ]").replace("\n", "\r\n"))
    write("profile", "bad-a100-cr-only", "g" + a100.replace("\n", "\r"))
    write("profile", "bad-a100-utf16", b"g\xff\xfe" + a100.encode("utf-16-le"))
    write("profile", "bad-a100-escape", "g" + a100.replace("name = A100", "name = \x1b[5mA100"))
    write("profile", "bad-a100-huge-memory", "g" + a100.replace("memory = 40GB", "memory = 1e308TB"))
    write("profile", "bad-a100-inf-peak", "g" + a100.replace("peak_fp32 = 19.5TFLOPS", "peak_fp32 = inf TFLOPS"))
    write("profile", "bad-a100-idle-above-busy", "g" + a100.replace("power_idle = 53W", "power_idle = 500W"))
    write("profile", "bad-a100-unknown-key", "g" + a100 + "peak_fp64 = 9.7TFLOPS\n")
    write("profile", "bad-a100-second-section", "g" + a100 + "[fabric]\nbandwidth = 1Gbps\n")
    write("profile", "bad-a100-names-profile", "g" + a100 + "profile = h100-80gb\n")
    write("profile", "bad-hdr-zero-bandwidth", "f" + hdr.replace("bandwidth = 200Gbps", "bandwidth = 0Gbps"))
    write("profile", "bad-empty-gpu", "g")


def idx(magic_dims, payload):
    magic, dims = magic_dims[0], magic_dims[1:]
    return struct.pack(">I", magic) + b"".join(struct.pack(">I", d) for d in dims) + payload


def idx_input(images, labels, max_samples=0):
    """The idx target's layout: images length (2 bytes, little endian), max_samples, images, labels."""
    return struct.pack("<HB", len(images), max_samples) + images + labels


def idx_seeds():
    one = idx((0x803, 1, 28, 28), bytes(range(256)) * 3 + bytes(16))
    two = idx((0x803, 2, 28, 28), bytes(2 * 784))
    write("idx", "ok-one-image", idx_input(one, idx((0x801, 1), b"\x07")))
    write("idx", "ok-two-images-keep-one", idx_input(two, idx((0x801, 2), b"\x09\x0c"), max_samples=1))
    write("idx", "bad-magic", idx_input(idx((0xD03, 1, 28, 28), bytes(784)), idx((0x801, 1), b"\x00")))
    write("idx", "bad-dimensions", idx_input(idx((0x802, 28, 28), bytes(784)), idx((0x801, 1), b"\x00")))
    write("idx", "bad-truncated-header", idx_input(b"\x00\x00\x08\x03\x00\x00", idx((0x801, 1), b"\x00")))
    write("idx", "bad-truncated-data", idx_input(idx((0x803, 2, 28, 28), bytes(800)), idx((0x801, 2), b"\x00\x01")))
    write("idx", "bad-trailing", idx_input(one + b"x", idx((0x801, 1), b"\x00")))
    write("idx", "bad-16gib-header", idx_input(idx((0x803, 21913098, 28, 28), b""), idx((0x801, 1), b"\x00")))
    write("idx", "bad-overflowing-header",
          idx_input(idx((0x803, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF), b""), idx((0x801, 1), b"\x00")))
    write("idx", "bad-zero-images", idx_input(idx((0x803, 0, 28, 28), b""), idx((0x801, 0), b"")))
    write("idx", "bad-32x32", idx_input(idx((0x803, 1, 32, 32), bytes(1024)), idx((0x801, 1), b"\x00")))
    write("idx", "bad-label-10", idx_input(one, idx((0x801, 1), b"\x0a")))
    write("idx", "bad-count-mismatch", idx_input(two, idx((0x801, 3), b"\x00\x01\x02")))
    write("idx", "bad-no-labels", idx_input(one, b""))


def workload_seeds():
    for path in sorted((ROOT / "models" / "workloads").glob("*.json")):
        write("workload", "ok-" + path.name, path.read_text(encoding="utf-8"))
    llama = text("models/workloads/llama-7b.json")
    resnet = text("models/workloads/resnet50.json")
    write("workload", "bad-truncated.json", llama[: len(llama) // 2])
    write("workload", "bad-misspelt-field.json", llama.replace('"hidden"', '"hiden"'))
    write("workload", "bad-huge-layers.json", llama.replace('"layers": 32', '"layers": 99999999999999999999'))
    write("workload", "bad-negative-ffn.json", llama.replace('"ffn": 11008', '"ffn": -1'))
    write("workload", "bad-float-heads.json", llama.replace('"heads": 32', '"heads": 32.5'))
    write("workload", "bad-escape-in-name.json", llama.replace('"swiglu"', '"swi\\u001b[31mglu"'))
    write("workload", "bad-c1-in-key.json", llama.replace('"bias"', '"bi\\u0085as"'))
    write("workload", "bad-lora-target.json",
          llama.replace('"flash_attention": true', '"flash_attention": true, "lora": {"rank": 4, "alpha": 8, '
                        '"targets": ["q\\u0007"]}'))
    write("workload", "bad-zero-image.json", resnet.replace('"image": 224', '"image": 0'))
    write("workload", "bad-many-blocks.json", resnet.replace('"blocks": 3, "width": 64', '"blocks": 20000, "width": 64'))
    write("workload", "bad-wide-expansion.json", resnet.replace('"expansion": 4', '"expansion": 1000000'))
    write("workload", "bad-not-an-object.json", "[1, 2, 3]")
    write("workload", "bad-deep-nesting.json", "[" * 10000 + "]" * 10000)
    write("workload", "bad-invalid-utf8.json", b'{"name": "\xff\xfe"}')
    write("workload", "bad-empty.json", "")
    write("workload", "bad-regress-number-overflow.json", "{\"name\": 1e999}")


if __name__ == "__main__":
    workload_seeds()
    ini_seeds()
    units_seeds()
    profile_seeds()
    idx_seeds()
    for target in sorted(p.name for p in CORPUS.iterdir()):
        print(f"{target}: {len(list((CORPUS / target).iterdir()))} seeds")
