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
# The README's examples, extracted verbatim.
readme=$(dirname "$examples")/README.md
awk '/^```c$/{f=1;next} /^```/{f=0} f' "$readme" >"$work/readme.c"
awk '/^```c\+\+$/{f=1;next} /^```/{f=0} f' "$readme" >"$work/readme.cc"
test -s "$work/readme.c" && test -s "$work/readme.cc"
cc -Wall -Werror -o "$work/readme_c" "$work/readme.c" \
  $(pkg-config --cflags --libs sluice) -Wl,-rpath,"$(dirname "$libdir")"
c++ -std=c++17 -Wall -Werror -o "$work/readme_cpp" "$work/readme.cc" \
  $(pkg-config --cflags --libs sluice) -Wl,-rpath,"$(dirname "$libdir")"
(cd "$work" && ./readme_c && ./readme_cpp)
test -f "$work/ckpt.sluice/SLUICE"

echo "install_test: installed package works through find_package and pkg-config"
