"""Reading tests/corpus/cases.txt back, as corpus_test.cpp reads it, for record_cases.py --rerun: each case's files
(their escapes undone), environment and arguments, and the text around them kept as it is."""


def unescape(text):
    """The bytes a line of a case's file stands for, as corpus_test.cpp reads it."""
    out, i = bytearray(), 0
    raw = text.encode("utf-8")
    while i < len(raw):
        c = raw[i:i + 1]
        if c != b"\\" or i + 1 == len(raw):
            out += c
            i += 1
            continue
        n = raw[i + 1:i + 2]
        if n in (b"n", b"r", b"t", b"\\"):
            out += {b"n": b"\n", b"r": b"\r", b"t": b"\t", b"\\": b"\\"}[n]
            i += 2
        elif n == b"x" and i + 3 < len(raw):
            out += bytes([int(raw[i + 2:i + 4], 16)])
            i += 4
        else:
            out += b"\\" + n
            i += 2
    return bytes(out)


def rerun_corpus(path, run):
    """Every case of the corpus file `path` run again with `run(case)` (which returns the exit status and the first
    line of stderr): the file's text as it is, its exit and stderr lines replaced, and the names of its cases."""
    lines = open(path, encoding="utf-8").read().split("\n")
    names, out, i, case = set(), [], 0, None
    while i < len(lines):
        line = lines[i]
        if line.startswith("== "):
            case = {"name": line[3:], "files": {}, "env": None, "args": ""}
            names.add(case["name"])
        elif line.startswith("file ") and case is not None:
            name = line[5:line.index(" ", 5)]
            out.append(line)
            data = b""
            i += 1
            while lines[i] != ">>":
                out.append(lines[i])
                data += unescape(lines[i]) + b"\n"
                i += 1
            if data.endswith(b"\\c\n"):
                data = data[:-3]
            case["files"][name] = data
            out.append(">>")
            i += 1
            continue
        elif line.startswith("env: ") and case is not None:
            case["env"] = line[5:]
        elif line.startswith("args: ") and case is not None:
            case["args"] = line[6:]
        elif line.startswith("exit: ") and case is not None:
            code, first = run(case)
            out.append("exit: " + str(code))
            out.append("stderr: " + first)
            i += 2  # the stderr line follows
            continue
        out.append(line)
        i += 1
    return "\n".join(out).rstrip("\n"), names
