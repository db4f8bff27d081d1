#!/usr/bin/env python3
"""Counts the file-system calls that reached the slow file system.

  count.py MOUNT TRACE...   TRACE: the per-process files of `strace -ff -y`

MOUNT stands for the parallel file system's mount point: every call on a
path under it (or on a descriptor opened there) is counted by kind, the
mkdir calls on the data root's own ancestors inside the mount included
(CreateDirs walks the whole path). A call that failed is counted under its
kind with "(failed)" added, so ENOENT probes and EEXIST mkdirs show.
Prints one "kind<TAB>count" line per kind, sorted, then the same per file
name (its last two components; c.K, journal.K, done.K, NAME.tmp.PID.TID).
"""
import collections
import re
import sys

prefix = sys.argv[1].rstrip("/")

PATH_CALLS = {
    "openat": 1, "open": 0, "creat": 0, "mkdir": 0, "mkdirat": 1,
    "rename": 0, "renameat": 1, "renameat2": 1, "unlink": 0, "unlinkat": 1,
    "rmdir": 0, "stat": 0, "lstat": 0, "newfstatat": 1, "statx": 1,
    "access": 0, "faccessat": 1, "faccessat2": 1, "truncate": 0,
}
FD_CALLS = {"fsync", "fdatasync", "flock", "ftruncate", "getdents64",
            "fstat", "pwrite64", "pread64", "fadvise64", "fallocate"}
line_re = re.compile(r'^(\w+)\((.*)\)\s+=\s+(-?\d+|\?)(.*)$')
str_re = re.compile(r'"((?:[^"\\]|\\.)*)"')
fd_re = re.compile(r'^(\d+)<([^>]*)>')

counts = collections.Counter()
per_path = collections.Counter()


def under(path):
    return path == prefix or path.startswith(prefix + "/")


def kind_of(call, args, path):
    if call in ("openat", "open", "creat"):
        flags = args
        if "O_DIRECTORY" in flags:
            return "open dir"
        if call == "creat" or "O_CREAT" in flags:
            return "open O_CREAT"
        return "open"
    if call in ("mkdir", "mkdirat"):
        return "mkdir"
    if call.startswith("rename"):
        return "rename"
    if call.startswith("unlink"):
        return "unlink"
    if call == "rmdir":
        return "rmdir"
    if call in ("stat", "lstat", "newfstatat", "statx", "access",
                "faccessat", "faccessat2"):
        return "stat"
    return call


def generic(name):
    """The path's last two components, numbers of a writer folded."""
    rel = name[len(prefix):].lstrip("/")
    parts = rel.split("/")[-2:] if rel else ["(mount)"]
    base = parts[-1]
    base = re.sub(r"\.tmp\.\d+\.\d+$", ".tmp.PID.TID", base)
    base = re.sub(r"^(c|journal|done)\.\d+$", r"\1.K", base)
    return "/".join(parts[:-1] + [base])


for trace in sys.argv[2:]:
    for raw in open(trace, errors="replace"):
        m = line_re.match(raw.strip())
        if not m:
            continue
        call, args, ret = m.group(1), m.group(2), m.group(3)
        failed = ret.startswith("-") or ret == "?"
        if call in PATH_CALLS:
            strs = str_re.findall(args)
            if not strs:
                continue
            paths = strs[:2] if call.startswith("rename") else strs[:1]
            path = paths[-1] if call.startswith("rename") else paths[0]
            if not any(under(q) for q in paths):
                continue
            k = kind_of(call, args, path)
            if failed:
                k += " (failed)"
            counts[k] += 1
            per_path[(k, generic(path))] += 1
        elif call in FD_CALLS:
            fm = fd_re.match(args)
            if not fm:
                continue
            path = fm.group(2)
            if not under(path):
                continue
            k = call
            if call in ("fsync", "fdatasync"):
                # -y shows the path; the directories are the ones we know.
                last = path.rsplit("/", 1)[-1]  # the file's own name
                isdir = not re.match(r"^(c\.\d+|journal\.\d+|done\.\d+|lock|"
                                     r"plan.*|index.*|.*\.index.*)$", last)
                k = call + (" dir" if isdir else " file")
            if failed:
                k += " (failed)"
            counts[k] += 1
            per_path[(k, generic(path))] += 1

for k in sorted(counts):
    print(f"{k}\t{counts[k]}")
print()
for (k, name), n in sorted(per_path.items()):
    print(f"  {k}\t{name}\t{n}")
