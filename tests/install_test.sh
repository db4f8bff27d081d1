#!/bin/sh
# Installs the build tree into a temporary prefix, then builds the examples
# against the installed copy only (find_package(sluice) and pkg-config) and
# runs them.
# The README's two code blocks are compiled and run the same way, so the
# README cannot drift from the API.
# Usage: install_test.sh BUILD_DIR EXAMPLES_DIR WORK_DIR CMAKE
set -eu
build=$1 examples=$2 work=$3 cmake=$4
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
"$cmake" --install "$build" --prefix "$prefix" >"$work/install.log"

# CMake consumer: find_package(sluice) from the prefix, nothing else.
"$cmake" -S "$examples" -B "$work/build" -G Ninja \
  -DCMAKE_PREFIX_PATH="$prefix" >"$work/configure.log"
"$cmake" --build "$work/build" >"$work/build.log"
"$work/build/kv_example_c" "$work/store_c"
"$work/build/kv_example_cpp" "$work/store_cpp"

# pkg-config consumer.
libdir=$(ls -d "$prefix"/lib*/pkgconfig | head -n 1)
export PKG_CONFIG_PATH=$libdir
cc -o "$work/kv_example_pc" "$examples/kv_example.c" \
  $(pkg-config --cflags --libs sluice) -Wl,-rpath,"$(dirname "$libdir")"
"$work/kv_example_pc" "$work/store_pc"
# The README's examples, extracted verbatim: each C block a program.
readme=$(dirname "$examples")/README.md
awk -v out="$work/readme" '/^```c$/{f=1;n++;next} /^```/{f=0}
  f{print > (out n ".c")}' "$readme"
awk '/^```c\+\+$/{f=1;next} /^```/{f=0} f' "$readme" >"$work/readme.cc"
test -s "$work/readme1.c" && test -s "$work/readme2.c" && test -s "$work/readme.cc"
for c in "$work"/readme*.c; do
  cc -Wall -Werror -o "${c%.c}" "$c" \
    $(pkg-config --cflags --libs sluice) -Wl,-rpath,"$(dirname "$libdir")"
  (cd "$work" && "${c%.c}")
done
c++ -std=c++17 -Wall -Werror -o "$work/readme_cpp" "$work/readme.cc" \
  $(pkg-config --cflags --libs sluice) -Wl,-rpath,"$(dirname "$libdir")"
(cd "$work" && ./readme_cpp)
test -f "$work/ckpt.sluice/SLUICE"
# The files example wrote the state to one file system through the other.
test "$("$prefix/bin/sluice" cat "$work/ckpt42" /state | tr -d '\0')" = \
  "the state of step 41"

# The installed interposer and tool find libsluice beside them, with the
# prefix on no search path: a file copied in through the interposer reads
# back, and the tool lists it.
mkdir -p "$work/mnt"
echo "through the installed interposer" > "$work/in.txt"
(cd "$work" && LD_PRELOAD="$prefix/lib/libsluice_preload.so" SLUICE_MOUNT="$work/mnt" \
  SLUICE_ROOT="$work/root" cp in.txt mnt/f.txt)
test "$(LD_PRELOAD="$prefix/lib/libsluice_preload.so" SLUICE_MOUNT="$work/mnt" \
  SLUICE_ROOT="$work/root" cat "$work/mnt/f.txt")" = "through the installed interposer"
test -z "$(ls -A "$work/mnt")"
"$prefix/bin/sluice" ls "$work/root" | grep -qx f.txt

# No RUNPATH of ours, built or installed, has an empty entry: the loader
# reads one as the current directory and would load libraries from the cwd.
for f in "$build"/*.so* "$build/sluice" "$build/bench/sluice-bench" \
         "$prefix"/lib/*.so* "$prefix"/bin/*; do
  [ -f "$f" ] && [ ! -L "$f" ] || continue
  rp=$(readelf -d "$f" | sed -n 's/.*R[UN]*PATH.*\[\(.*\)\]$/\1/p')
  case ":$rp:" in
    *::*) if [ -n "$rp" ]; then
            echo "install_test: $f has an empty RUNPATH entry: '$rp'" >&2; exit 1
          fi ;;
  esac
done

echo "install_test: installed package works through find_package and pkg-config"
