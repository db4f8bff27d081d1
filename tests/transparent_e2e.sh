#!/usr/bin/env bash
# Unmodified programs on stored files, through the LD_PRELOAD interposer
# (MODE preload) or through `sluice mount`, the FUSE view (MODE fuse).
# Every case runs twice, on a plain directory and on the mount, and must
# print the same and exit the same; at the end both trees must hold the
# same files with the same bytes.
#   preload_e2e.sh MODE WORK LIBSLUICE_PRELOAD_SO SLUICE_BENCH MPIEXEC SLUICE
# Exit 77 (skipped) in fuse mode only where FUSE cannot mount here.
set -uo pipefail
mode=$1 work=$2 lib=$(realpath "$3") bench=$(realpath "$4") mpiexec=$5
sluice=$(realpath "$6")
rm -rf "$work"
mkdir -p "$work/src/dir1/sub" "$work/plain" "$work/root" "$work/out" \
         "$work/scratch.plain" "$work/scratch.sluice"
mnt=$work/mnt
mkdir -p "$mnt"  # the mount point: empty, as for any mount
export SLUICE_MOUNT=$mnt SLUICE_ROOT=$work/root SLUICE_LOCK_WAIT=60
case $mode in
  preload) pre=(env LD_PRELOAD="$lib") ;;
  fuse)
    pre=(env)
    if [ ! -c /dev/fuse ]; then echo "SKIP: no /dev/fuse on this machine"; exit 77; fi
    "$sluice" mount -f "$work/root" "$mnt" 2> "$work/mount.err" &
    daemon=$!
    for _ in $(seq 100); do
      mountpoint -q "$mnt" && break
      kill -0 $daemon 2>/dev/null || break
      sleep 0.1
    done
    if ! mountpoint -q "$mnt"; then
      cat "$work/mount.err"
      if grep -qi "fuse\|permission\|not permitted" "$work/mount.err"; then
        echo "SKIP: FUSE cannot mount here (see above)"; exit 77
      fi
      echo "FAIL: sluice mount did not mount"; exit 1
    fi
    unmount() { fusermount3 -u "$mnt" 2>/dev/null; wait $daemon; }
    trap 'mountpoint -q "$mnt" && fusermount3 -u "$mnt"' EXIT
    ;;
  *) echo "MODE must be preload or fuse"; exit 2 ;;
esac

# Inputs, on a plain directory.
src=$work/src
head -c $((3 << 20)) /dev/urandom > "$src/data.bin"
head -c 1234 /dev/urandom >> "$src/data.bin"
head -c $((1 << 20)) /dev/urandom > "$src/mib.bin"
for i in $(seq 1 400); do echo "line $i: tcp udp $((i * 7919 % 1000))"; done > "$src/text.txt"
echo alpha > "$src/dir1/a.txt"
head -c 70000 /dev/urandom > "$src/dir1/sub/b.bin"
echo gamma > "$src/dir1/sub/c.txt"

fails=0 cases=0
# case NAME SNIPPET: runs SNIPPET under bash with D (the directory under
# test), S (the inputs), T (a plain scratch directory of the side) and B
# (the directory whose blocks hold D's data: D itself, or the data root); a
# side that hangs is stopped after 300 s (exit 124) and fails the case.
case_() {
  local name=$1 snippet=$2 rc_p rc_s
  cases=$((cases + 1))
  D=$work/plain S=$src T=$work/scratch.plain B=$work/plain timeout 300 bash -c "$snippet" \
    > "$work/out/$name.plain" 2> "$work/out/$name.plain.err"
  rc_p=$?
  D=$mnt S=$src T=$work/scratch.sluice B=$work/root "${pre[@]}" timeout 300 bash -c "$snippet" \
    > "$work/out/$name.sluice" 2> "$work/out/$name.sluice.err"
  rc_s=$?
  sed -i "s|$work/plain|D|g; s|$work/scratch.plain|T|g" "$work/out/$name.plain"
  sed -i "s|$mnt|D|g; s|$work/scratch.sluice|T|g" "$work/out/$name.sluice"
  if [ $rc_p != $rc_s ] || ! cmp -s "$work/out/$name.plain" "$work/out/$name.sluice"; then
    echo "FAIL $name: exit $rc_p plain, $rc_s stored"
    diff "$work/out/$name.plain" "$work/out/$name.sluice" | head -20
    echo "--- stderr, stored:"; head -20 "$work/out/$name.sluice.err"
    fails=$((fails + 1))
  else
    echo "ok   $name (exit $rc_p, $(wc -l < "$work/out/$name.plain") lines)"
  fi
}

case_ cp_in 'cp $S/data.bin $D/data.bin && cp $S/text.txt $D/text.txt && cp $S/mib.bin $D/mib.bin && cp -r $S/dir1 $D/dir1 && md5sum < $D/data.bin'
case_ cp_out 'cp $D/data.bin $T/out.bin && md5sum < $T/out.bin && cmp $T/out.bin $S/data.bin'
case_ cat_pipe 'cat $D/text.txt | md5sum; cat $D/data.bin | wc -c'
case_ cat_file 'cat $D/text.txt > $D/copy.txt && cat $D/data.bin $D/text.txt > $D/both.bin && md5sum < $D/copy.txt && md5sum < $D/both.bin'
case_ cat_append 'cat $D/text.txt >> $D/copy.txt && cat $D/text.txt >> $D/copy.txt && wc -c < $D/copy.txt && md5sum < $D/copy.txt'
case_ redirections 'echo first > $D/r.txt; echo second >> $D/r.txt; printf "%s\n" third >> $D/r.txt; tr a-z A-Z < $D/r.txt; cat < $D/r.txt; { echo in; cat $D/r.txt; echo out; } > $D/group.txt; cat $D/group.txt'
case_ md5sum_c 'cd $D && md5sum data.bin text.txt dir1/sub/b.bin > sums.md5 && md5sum -c sums.md5 && echo corrupt > dir1/a.txt.bad && md5sum -c --quiet sums.md5; cat sums.md5'
case_ md5sum_bad 'cd $D && cp text.txt t2.txt && md5sum t2.txt > t2.md5 && echo x >> t2.txt; md5sum -c t2.md5; echo "exit $?"'
case_ dd 'dd if=$S/data.bin of=$D/dd.bin bs=64k status=none && dd if=$S/text.txt of=$D/dd.bin bs=1k seek=3 conv=notrunc status=none && md5sum < $D/dd.bin && dd if=$S/mib.bin of=$D/direct.bin bs=64k oflag=direct conv=fsync status=none && md5sum < $D/direct.bin && dd if=$D/dd.bin bs=1000 skip=5 count=7 status=none | md5sum'
case_ tar 'tar -cf $D/a.tar -C $S dir1 && tar -tf $D/a.tar | sort && mkdir $D/x && tar -xf $D/a.tar -C $D/x && find $D/x | sort && cat $D/x/dir1/sub/c.txt && cmp $D/x/dir1/sub/b.bin $S/dir1/sub/b.bin && tar -cf $D/b.tar --sort=name --mtime=@0 -C $D/x dir1 && tar -tvf $D/b.tar | awk "{print \$3, \$6}" | sort'
case_ tar_z 'tar -czf $D/a.tgz -C $S dir1 && tar -tzf $D/a.tgz | sort && mkdir -p $T/y && tar -xzf $D/a.tgz -C $T/y && cmp $T/y/dir1/sub/b.bin $S/dir1/sub/b.bin && tar -czf $T/z.tgz -C $D dir1 && tar -tzf $T/z.tgz | sort'
case_ chmod_touch 'cp $S/text.txt $D/ct.txt && chmod 600 $D/ct.txt && touch -d @1000000000 $D/ct.txt && stat -c "%a %Y %s" $D/ct.txt && mkdir $D/ctd && chmod 711 $D/ctd && stat -c %a $D/ctd && cp -p $D/ct.txt $D/ct2.txt && stat -c "%a %Y" $D/ct2.txt && touch -m -d @1200000000 $D/ct2.txt && stat -c "%Y" $D/ct2.txt && python3 -c "import os,sys; fd=os.open(sys.argv[1], os.O_RDWR); os.fchmod(fd, 0o604); os.utime(fd, ns=(5, 1300000000123456789)); os.close(fd); st=os.stat(sys.argv[1]); print(oct(st.st_mode), st.st_mtime_ns)" $D/ct2.txt && rm $D/ct.txt $D/ct2.txt && rmdir $D/ctd'
case_ ls 'ls $D | sort; ls -l $D/dir1/sub | awk "NR > 1 {print \$1, \$5, \$9}"; ls -ld $D/dir1 | cut -c1; ls $D/nonexistent; echo "exit $?"'
case_ find 'cd $D && find . -name "*.txt" | sort && find $D/dir1 -type f | sort && find $D -type d | sort && find $D -size +1000k | sort'
case_ du 'du -b $D/data.bin | cut -f1; du --apparent-size -B1 $D/dir1/sub/b.bin | cut -f1; du -s $D > /dev/null; echo "exit $?"'
# Removing a file gives its blocks back (the store's at its next barrier:
# the rm process's exit, or the sync of the file it removed after).
case_ space 'head -c 12M /dev/zero | tr "\0" x > $D/space.bin && sync $D/space.bin && a=$(du -sk $B | cut -f1) && truncate -s 4M $D/space.bin && sync $D/space.bin && b=$(du -sk $B | cut -f1) && rm $D/space.bin && sync $D && c=$(du -sk $B | cut -f1) && echo "truncate freed 7 MiB: $([ $((a - b)) -ge 7168 ] && echo yes || echo "no ($a -> $b KiB)")"; echo "rm freed 3 MiB: $([ $((b - c)) -ge 3072 ] && echo yes || echo "no ($b -> $c KiB)")"'
# fsync of a directory makes the unlink in it durable: its space is given
# back then, while the process still holds a file open (and the store).
case_ fsync_dir 'python3 - "$D" "$B" <<"PY"
import os, sys
d, b = sys.argv[1], sys.argv[2]
def blocks():
    return sum(os.lstat(os.path.join(r, f)).st_blocks * 512
               for r, _, fs in os.walk(b) for f in fs)
with open(os.path.join(d, "f.bin"), "wb") as f:
    f.write(b"y" * (6 << 20))
    os.fsync(f.fileno())
held = open(os.path.join(d, "held.txt"), "w")
dfd = os.open(d, os.O_RDONLY)
before = blocks()
os.unlink(os.path.join(d, "f.bin"))
os.fsync(dfd)
print("freed at fsync of the directory:", before - blocks() >= (5 << 20))
os.close(dfd)
held.close()
os.unlink(os.path.join(d, "held.txt"))
PY'
case_ mv 'mv $D/copy.txt $D/moved.txt && cp $S/text.txt $T/t.txt && mv $T/t.txt $D/from_plain.txt && mv $D/from_plain.txt $T/back.txt && md5sum < $T/back.txt && mkdir $D/mvdir && mv $D/both.bin $D/mvdir/ && ls $D | sort && ls $D/mvdir'
case_ rm 'rm $D/moved.txt && rm -r $D/x && rm -f $D/nothing && ls $D | sort; rm $D/nothing2; echo "exit $?"; rmdir $D/dir1; echo "exit $?"'
case_ head_tail_wc_grep 'head -c 100 $D/text.txt | md5sum; head -n 3 $D/text.txt; tail -c 100 $D/data.bin | md5sum; tail -n 2 $D/text.txt; wc -c $D/data.bin | cut -d" " -f1; wc -l < $D/text.txt; grep -c tcp $D/text.txt; grep "line 17:" $D/text.txt; grep -q nothing-here $D/text.txt; echo "exit $?"'
# A shell that used the store forks subshells that use it too, with no
# exec in between (builtins), and exit through exit().
case_ subshells 'echo x > $D/sub.txt; (true; exit 0); echo "after a subshell"; v=$(cat $D/sub.txt); echo "substituted $v"; (echo z >> $D/sub.txt); cat $D/sub.txt; seq 3 | while read l; do echo "loop $l" >> $D/loop.txt; done; cat $D/loop.txt; (cd $D && echo inside > in.txt && cat in.txt); (read w < $D/loop.txt; echo "read $w"); (cat < $D/nonexistent) 2>/dev/null; echo "exit $?"; rm $D/sub.txt $D/loop.txt $D/in.txt'
# Edits in place write a temporary file beside the original (mkstemp,
# made inside libc) and rename it; the umask applies to stored files and
# directories, also after a umask call.
case_ edit_in_place 'seq 5 > $D/s.txt && sed -i "s/3/three/" $D/s.txt && cat $D/s.txt && (cd $D && perl -pi -e "s/2/two/" s.txt) && cat $D/s.txt && t=$(mktemp -p $D) && echo made > $t && cat $t && rm $t && d=$(mktemp -d -p $D) && rmdir $d && (umask 077; echo p > $D/priv; mkdir $D/privd) && stat -c %a $D/priv $D/privd && mkdir $D/pub && stat -c %a $D/pub && python3 -c "import os,sys; os.umask(0o027); os.mkdir(sys.argv[1]); print(oct(os.stat(sys.argv[1]).st_mode & 0o777))" $D/pyd && rm -r $D/priv $D/privd $D/pub $D/pyd $D/s.txt && ls $D | grep -c tmp'
# Wide-character stdio (fgetws, fputwc) on stored files, in and out, with
# a byte that is not UTF-8.
case_ wide_chars 'cd $D && printf "h\xc3\xa9llo w\xc3\xb6rld\n\xe2\x82\xacuro\n" > u.txt && LC_ALL=C.UTF-8 rev u.txt && LC_ALL=C.UTF-8 rev u.txt > r.txt && md5sum < r.txt && LC_ALL=C.UTF-8 column -t u.txt > col.txt && cat col.txt && printf "ok line\nbad \xff byte\n" > bad.txt; LC_ALL=C.UTF-8 rev bad.txt 2>&1; echo "exit $?"; rm u.txt r.txt col.txt bad.txt'
# scandir (run-parts; stored files cannot be executed, so only listed) and
# glob(3) (called from Python through ctypes) walk directories with libc's
# internal calls.
# The wscanf family (GNU and C99 names) on a stored stream, after an
# ungetwc, through ctypes.
case_ wide_scanf 'printf "42 h\xc3\xa9llo\n7 w\xc3\xb6rld 3.5\n" > $D/ws.txt && LC_ALL=C.UTF-8 python3 - "$D/ws.txt" <<"PY"
import ctypes, sys
libc = ctypes.CDLL(None)
libc.fopen.restype = ctypes.c_void_p
libc.fopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
libc.fgetwc.argtypes = libc.fclose.argtypes = [ctypes.c_void_p]
libc.fgetwc.restype = ctypes.c_uint
libc.ungetwc.argtypes = [ctypes.c_uint, ctypes.c_void_p]
f = ctypes.c_void_p(libc.fopen(sys.argv[1].encode(), b"r"))
c = libc.fgetwc(f)
libc.ungetwc(c, f)
n, w = ctypes.c_int(), ctypes.create_unicode_buffer(32)
print(libc.fwscanf(f, ctypes.c_wchar_p("%d %ls"), ctypes.byref(n), w), n.value, w.value)
d = ctypes.c_double()
print(libc.__isoc99_fwscanf(f, ctypes.c_wchar_p("%d %ls %lf"), ctypes.byref(n), w, ctypes.byref(d)),
      n.value, w.value, d.value)
print(libc.fwscanf(f, ctypes.c_wchar_p("%d"), ctypes.byref(n)))
libc.fclose(f)
PY
rm $D/ws.txt'
# C++ standard streams follow a stored file dup2ed onto stdout, or
# freopened over it (libstdc++ writes through the FILE it started with).
case_ cxx_streams 'cat > $T/cx.cc <<"CC"
#include <fcntl.h>
#include <unistd.h>
#include <cstdio>
#include <iostream>
int main(int argc, char** argv) {
  std::cout << "to the terminal\n" << std::flush;
  int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
  dup2(fd, 1);
  close(fd);
  std::cout << "cout after dup2 " << 42 << "\n";
  printf("printf after dup2\n");
  std::wcout << L"wcout" << std::endl;
  fflush(stdout);
  if (!freopen(argv[2], "w", stdout)) return 1;
  std::cout << "cout after freopen" << std::endl;
  std::cerr << "cerr" << std::endl;
  return 0;
}
CC
c++ -O1 -o $T/cx $T/cx.cc && $T/cx $D/cx1.txt $D/cx2.txt && cat $D/cx1.txt && cat $D/cx2.txt && $T/cx $D/cx3.txt $D/cx4.txt > $D/cx0.txt 2> $D/cxe.txt && cat $D/cx0.txt $D/cx3.txt $D/cx4.txt $D/cxe.txt && rm $D/cx?.txt $D/cxe.txt'
# close_range / closefrom above a stored file still open: the store's own
# descriptors are not closed under it (the file lost its data before).
case_ close_range 'python3 - "$D" <<"PY"
import ctypes, os, sys
d = sys.argv[1]
f = open(os.path.join(d, "cr1.txt"), "w")
f.write("first\n"); f.flush()
os.closerange(10, 65536)
f.write("second\n"); f.close()
g = open(os.path.join(d, "cr2.txt"), "w")
g.write("third\n"); g.flush()
ctypes.CDLL(None).closefrom(10)
g.write("fourth\n"); g.close()
for n in ("cr1.txt", "cr2.txt"):
    print(open(os.path.join(d, n)).read(), end="")
    os.unlink(os.path.join(d, n))
PY'
case_ scandir_glob 'mkdir $D/rp && printf "#!/bin/sh\necho part one\n" > $D/rp/10-a && printf "#!/bin/sh\necho part two\n" > $D/rp/20-b && touch $D/rp/skip.me && chmod +x $D/rp/10-a $D/rp/20-b && run-parts --list $D/rp && run-parts --test $D/rp && python3 - "$D" <<"PY"
import ctypes, sys
class Glob(ctypes.Structure):
    _fields_ = [("pathc", ctypes.c_size_t), ("pathv", ctypes.POINTER(ctypes.c_char_p)),
                ("offs", ctypes.c_size_t), ("flags", ctypes.c_int), ("rest", ctypes.c_char * 44)]
libc = ctypes.CDLL(None)
for pat in ("/rp/[0-9]*", "/rp/*.me", "/nothing*", "/*/1*"):
    g = Glob()
    r = libc.glob((sys.argv[1] + pat).encode(), 0, None, ctypes.byref(g))
    print(pat, r, sorted(g.pathv[i].decode().replace(sys.argv[1], "D") for i in range(g.pathc)))
    libc.globfree(ctypes.byref(g))
PY
rm -r $D/rp'
# Pipelines with a stored reader and a stored writer at once, and a shell
# that opens stored files on descriptors of its choosing (exec 5< f).
case_ pipelines 'seq 1 20000 > $D/p.txt; cat $D/p.txt | tee $D/q.txt | wc -l; tac $D/p.txt | tee -a $D/q.txt > /dev/null; wc -l < $D/q.txt; md5sum < $D/q.txt; cat $D/p.txt | while read x; do echo "n$x"; done > $D/r.txt; tail -1 $D/r.txt; exec 5< $D/r.txt; read -u 5 l; echo "read $l"; exec 5<&-; exec 3> $D/s.txt; echo three >&3; exec 3>&-; cat $D/s.txt; rm $D/p.txt $D/q.txt $D/r.txt $D/s.txt'
# The kernel's own copies (copy_file_range, sendfile, splice, the FICLONE
# ioctl) from a stored file, into the store and out of it: each copies the
# file's bytes or fails so that the caller falls back to read and write;
# none may move the bytes of the descriptor underneath.
case_ kernel_copies 'python3 - "$D" "$T" <<"PY"
import fcntl, hashlib, os, sys
d, t = sys.argv[1], sys.argv[2]
src = os.path.join(d, "data.bin")
want = hashlib.md5(open(src, "rb").read()).hexdigest()
FICLONE = 0x40049409
def until_done(step):  # a kernel copy, repeated until it copies nothing
    while step() > 0:
        pass
def spliced(fi, fo):  # file -> pipe -> file
    r, w = os.pipe()
    try:
        def step():
            n = os.splice(fi, w, 1 << 16)
            got = 0
            while got < n:
                got += os.splice(r, fo, n - got)
            return n
        until_done(step)
    finally:
        os.close(r); os.close(w)
calls = {
    "copy_file_range": lambda fi, fo: until_done(lambda: os.copy_file_range(fi, fo, 1 << 20)),
    "sendfile": lambda fi, fo: until_done(lambda: os.sendfile(fo, fi, None, 1 << 20)),
    "splice": spliced,
    "FICLONE": lambda fi, fo: fcntl.ioctl(fo, FICLONE, fi),
}
for name, call in calls.items():
    for where in (d, t):
        dst = os.path.join(where, "k_" + name + ".bin")
        fi = os.open(src, os.O_RDONLY)
        fo = os.open(dst, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            call(fi, fo)
        except OSError:  # what cp and shutil do: start again by hand
            os.lseek(fi, 0, 0); os.lseek(fo, 0, 0); os.ftruncate(fo, 0)
            while True:
                b = os.read(fi, 1 << 16)
                if not b:
                    break
                os.write(fo, b)
        os.close(fi); os.close(fo)
        got = hashlib.md5(open(dst, "rb").read()).hexdigest()
        print(name, "into the store" if where == d else "out of it", got == want)
        os.unlink(dst)
PY'
# Read-only and private mappings of stored files (copies made at mmap):
# Python's mmap, NumPy's mmap_mode, and git, which maps what it reads.
case_ mmap_reads 'python3 - "$D" <<"PY"
import mmap, os, sys
import numpy as np
d = sys.argv[1]
with open(os.path.join(d, "m.bin"), "wb") as f:
    f.write(bytes(range(256)) * 40)
with open(os.path.join(d, "m.bin"), "rb") as f:
    m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    print(len(m), m[:4], m[5000:5004], m.find(b"\xfe\xff\x00"))
    c = mmap.mmap(f.fileno(), 4096, access=mmap.ACCESS_COPY, offset=4096)
    c[0:2] = b"zz"; print(c[:3])
print(open(os.path.join(d, "m.bin"), "rb").read(4096 + 3)[-3:])
np.save(os.path.join(d, "a.npy"), np.arange(1000.0))
print(np.load(os.path.join(d, "a.npy"), mmap_mode="r")[10:13], np.load(os.path.join(d, "a.npy"), mmap_mode="c").sum())
os.remove(os.path.join(d, "m.bin")); os.remove(os.path.join(d, "a.npy"))
PY
cd $D && git init -q repo && cd repo && seq 5 > f && git add f && git -c user.email=a@b -c user.name=n commit -qm first && echo 6 >> f && git -c user.email=a@b -c user.name=n commit -qam second && git log --format=%s && git show HEAD~1:f | tail -1 && git diff HEAD~1 --stat | tail -1 && git status --short && cd .. && rm -rf repo'
case_ fork_python 'python3 - "$D" <<"PY"
import os, sys
d = sys.argv[1]
with open(os.path.join(d, "pf.txt"), "w") as f:
    f.write("parent\n")
pid = os.fork()
if pid == 0:
    with open(os.path.join(d, "pf.txt"), "a") as f:
        f.write("child\n")
    print(open(os.path.join(d, "pf.txt")).read(), end="", flush=True)
    os._exit(7)
_, status = os.waitpid(pid, 0)
print("child exit", os.waitstatus_to_exitcode(status))
print(open(os.path.join(d, "pf.txt")).read(), end="")
os.remove(os.path.join(d, "pf.txt"))
PY'
case_ python 'python3 - "$D" <<"PY"
import os, shutil, subprocess, sys
d = sys.argv[1]
with open(os.path.join(d, "py.txt"), "w") as f:
    f.write("hello\n")
with open(os.path.join(d, "py.txt"), "a") as f:
    f.write("more\n")
with open(os.path.join(d, "py.txt"), "r+b") as f:
    f.seek(2); f.write(b"LL"); f.seek(0, 2); print(f.tell()); f.seek(1); print(f.read(4))
print(open(os.path.join(d, "py.txt")).read(), end="")
print(sorted(os.listdir(d)))
print(sorted(e.name for e in os.scandir(os.path.join(d, "dir1"))))
shutil.copyfile(os.path.join(d, "data.bin"), os.path.join(d, "py.bin"))
print(open(os.path.join(d, "py.bin"), "rb").read() == open(os.path.join(d, "data.bin"), "rb").read())
with open(os.path.join(d, "sub.txt"), "w") as out:
    subprocess.run(["echo", "from a child"], stdout=out, check=True)
    subprocess.run(["cat", os.path.join(d, "text.txt")], stdout=out, check=True)
print(subprocess.run(["md5sum"], stdin=open(os.path.join(d, "sub.txt")), capture_output=True, text=True).stdout, end="")
print(os.path.getsize(os.path.join(d, "sub.txt")), os.path.isdir(os.path.join(d, "dir1")), os.path.exists(os.path.join(d, "nope")))
PY'
if python3 -c "import h5py" 2>/dev/null; then
  case_ h5py 'python3 - "$D" <<"PY"
import sys, h5py, numpy as np
d = sys.argv[1]
a = np.arange(200000, dtype=np.float64).reshape(400, 500)
with h5py.File(d + "/h.h5", "w") as f:
    f.create_dataset("x", data=a, chunks=(100, 100))
    f["x"].attrs["note"] = "checkpoint"
with h5py.File(d + "/h.h5", "r") as f:
    b = f["x"][...]
    print(f["x"].shape, f["x"].attrs["note"], bool((a == b).all()), float(b.sum()))
PY'
else
  echo "FAIL h5py: python3 cannot import h5py (scripts/install-deps.sh installs it)"
  fails=$((fails + 1))
fi

# The trees: the same files with the same bytes.
cases=$((cases + 1))
(cd "$work/plain" && find . -type f | sort | xargs md5sum) > "$work/out/tree.plain"
(cd "$mnt" && "${pre[@]}" bash -c 'find . -type f | sort | xargs md5sum') > "$work/out/tree.sluice"
if cmp -s "$work/out/tree.plain" "$work/out/tree.sluice" && [ -s "$work/out/tree.plain" ]; then
  echo "ok   trees ($(wc -l < "$work/out/tree.plain") files)"
else
  echo "FAIL trees"; diff "$work/out/tree.plain" "$work/out/tree.sluice" | head; fails=$((fails + 1))
fi

# sluice-bench's POSIX API on the mount, 4 ranks, data checked on write
# and read: one shared file, then a file per process.
# (`layout`, not `mode`: the script's mode is needed after the loop.)
for layout in shared fpp; do
  cases=$((cases + 1))
  flag=""; [ $layout = fpp ] && flag=-F
  xs=(-x SLUICE_MOUNT -x SLUICE_ROOT -x SLUICE_LOCK_WAIT)
  [ $mode = preload ] && xs+=(-x LD_PRELOAD="$lib")
  if "$mpiexec" -n 4 "${xs[@]}" "$bench" -a POSIX -b 2m -t 256k -s 2 -e -W -R $flag \
       -o "$mnt/bench.$layout" > "$work/out/bench.$layout" 2>&1 &&
     { [ $mode != preload ] || [ -z "$(ls -A "$mnt")" ]; }; then
    echo "ok   sluice-bench POSIX $layout, 4 ranks, checked"
  else
    echo "FAIL sluice-bench POSIX $layout (or it wrote to the real directory $mnt)"
    tail -20 "$work/out/bench.$layout"; ls -A "$mnt" | head
    fails=$((fails + 1))
  fi
done
cases=$((cases + 1))
if [ $mode = preload ]; then
  # What each rank wrote is in its own store (the file layer's N-writers rule).
  n=$(ls -d "$work/root"/writer.* | wc -l)
  if [ "$n" -ge 4 ]; then echo "ok   $n writer stores"; else echo "FAIL: $n writer stores"; fails=$((fails + 1)); fi
else
  # Unmounted, the daemon has closed the store: every file checks.
  unmount
  if "$sluice" verify "$work/root" > "$work/out/verify" 2>&1 &&
     grep -q " 0 bad, 0 incomplete" "$work/out/verify"; then
    echo "ok   unmounted; $(tail -1 "$work/out/verify")"
  else
    echo "FAIL: sluice verify after unmount"; cat "$work/out/verify"; fails=$((fails + 1))
  fi
  # Read-only (-r, the merged view; detached this time): reads the same
  # bytes, refuses changes; a bad root is a clear error, exit 1.
  cases=$((cases + 1))
  if "$sluice" mount -r "$work/root" "$mnt" 2> "$work/out/ro.err"; then
    ro_ok=1
    cmp -s "$mnt/data.bin" "$src/data.bin" || ro_ok=0
    echo x 2> "$work/out/ro.write" > "$mnt/new.txt" && ro_ok=0
    grep -q "Read-only file system" "$work/out/ro.write" || ro_ok=0
    fusermount3 -u "$mnt" || ro_ok=0
    "$sluice" mount "$work/no-such-root" "$mnt" 2> "$work/out/bad.err" && ro_ok=0
    grep -q "no-such-root" "$work/out/bad.err" || ro_ok=0
    if [ $ro_ok = 1 ]; then echo "ok   read-only mount, bad root"; else
      echo "FAIL: read-only mount or bad root"; cat "$work/out/ro.write" "$work/out/bad.err"
      fails=$((fails + 1)); fi
  else
    echo "FAIL: sluice mount -r"; cat "$work/out/ro.err"; fails=$((fails + 1))
  fi
fi

echo "$((cases - fails))/$cases cases passed"
[ $fails = 0 ]
