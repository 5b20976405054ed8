#!/usr/bin/env bash
# Build the project with a CUDA 12.x toolkit (12.4.1) assembled without root and without touching
# the system: nothing is installed, everything lands under $CUDA12_DIR.
#
#   scripts/build_cuda12.sh [extra cmake args...]
#   e.g. scripts/build_cuda12.sh -DLADDER_FOLDERS="vector_add;transpose;reduction"
#
# Where the pieces come from:
#   PyPI (pip download, no install): nvidia-cuda-runtime-cu12 (headers, libcudart.so.12),
#     nvidia-cuda-nvcc-cu12 (crt/ headers, ptxas, libdevice), nvidia-cuda-cccl-cu12 (cub, thrust,
#     libcu++), nvidia-cublas-cu12 (cublas headers and libraries), nvidia-nvtx-cu12 (nvtx3 headers).
#   Debian trixie non-free (apt-get download into a private apt state, no install):
#     nvidia-cuda-toolkit 12.4.131 for the compiler itself, and libcudart_static.a and
#     libcudadevrt.a out of nvidia-cuda-dev 12.4.127 (a 930 MB download; only those two files are
#     unpacked). No -cu12 wheel on PyPI ships nvcc, cicc, cudafe++, fatbinary or nvlink (every
#     nvidia-cuda-nvcc-cu12 from 12.0 to 12.9 has only ptxas, libnvvm and headers), nor the static
#     runtime that CMake's CUDA compiler check links (CMAKE_CUDA_RUNTIME_LIBRARY defaults to Static).
#
# This machine's image also has CUDA 13.0 headers in /usr/local/include and its libraries in
# /usr/local/lib and /usr/local/lib64, both on the compilers' default search paths: the script
# clears CUDA_HOME/LIBRARY_PATH/CPATH and /usr/local/cuda from PATH, and after the build fails if
# any object read a header, or any program needs a library, from outside the 12.x toolkit.
#
# ISOLATE=1 (root, util-linux unshare) goes further: the whole run sees empty /usr/local/include,
# /usr/local/lib and /usr/local/cuda-* (a private mount namespace; nothing changes for anyone else).
#
# HEADERS=12.2 builds against the oldest headers the README promises: CUDA 12.2.0's runtime and
# CCCL (CUB 2.1.1, whose DeviceReduce takes an int item count) from PyPI, laid over a copy of the
# 12.4.1 toolkit (no 12.2 nvcc can be had here: neither PyPI nor Debian ships one), so every step
# compiles against 12.2's runtime API and 12.2.0's CUB and Thrust (libcu++ stays 12.4.1's: PyPI's
# 12.2 CCCL wheels lack its extension-less headers).
#
# Environment: CUDA12_DIR (work area, default ~/.cache/ladder-cuda12), BUILD_DIR (default
# <repo>/build-cuda12, or <repo>/build-cuda12-headers12.2), JOBS (default 2), SKIP_TESTS=1 to stop
# after the build, ISOLATE=1, HEADERS=12.2.
set -euo pipefail

if [[ ${ISOLATE:-0} == 1 && -z ${LADDER_CUDA12_ISOLATED:-} ]]; then
  exec unshare -m --propagation private env LADDER_CUDA12_ISOLATED=1 bash -c '
    for d in /usr/local/include /usr/local/lib /usr/local/cuda-*; do
      if [[ -d $d && ! -L $d ]]; then mount -t tmpfs none "$d"; fi
    done
    exec bash "$0" "$@"' "${BASH_SOURCE[0]}" "$@"
fi

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CUDA12_DIR=${CUDA12_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ladder-cuda12}
HEADERS=${HEADERS:-}
[[ -z $HEADERS || $HEADERS == 12.2 ]] || { echo "HEADERS=$HEADERS: only 12.2 is known" >&2; exit 2; }
BUILD_DIR=${BUILD_DIR:-$SRC/build-cuda12${HEADERS:+-headers$HEADERS}}
JOBS=${JOBS:-2}

# One CUDA release, 12.4 update 1: the same component versions on both sides.
DEB_NVCC=12.4.131~12.4.1-2
DEB_DEV=12.4.127~12.4.1-2
WHEELS=(nvidia-cuda-nvcc-cu12==12.4.131 nvidia-cuda-runtime-cu12==12.4.127
        nvidia-cuda-cccl-cu12==12.4.127.post1 nvidia-cublas-cu12==12.4.5.8
        nvidia-nvtx-cu12==12.4.127)

TK=$CUDA12_DIR/toolkit           # the assembled toolkit (CUDAToolkit_ROOT)

# No CUDA 13 through the environment.
unset CUDA_HOME CUDA_PATH CUDA_ROOT CUDAToolkit_ROOT CPATH C_INCLUDE_PATH CPLUS_INCLUDE_PATH LIBRARY_PATH
PATH=$(tr ':' '\n' <<<"$PATH" | grep -v '/cuda' | paste -sd:)
export CUDACXX=$TK/bin/nvcc       # also for configures that tests run (gtest_fallback_configures)
mkdir -p "$CUDA12_DIR"/{wheels,debs}

if [[ ! -x $TK/bin/nvcc ]]; then
  echo "== download: PyPI wheels"
  python3 -m pip download -q --no-deps --only-binary=:all: --platform manylinux2014_x86_64 \
    -d "$CUDA12_DIR/wheels" "${WHEELS[@]}"

  echo "== download: Debian trixie nvidia-cuda-toolkit $DEB_NVCC, nvidia-cuda-dev $DEB_DEV (private apt state)"
  apt_dir=$CUDA12_DIR/apt
  mkdir -p "$apt_dir"/lists/partial "$apt_dir"/cache/archives/partial
  echo "deb http://deb.debian.org/debian trixie non-free" >"$apt_dir/sources.list"
  APT=(-o Dir::Etc::SourceList="$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
       -o Dir::State::Lists="$apt_dir/lists" -o Dir::Cache="$apt_dir/cache"
       -o APT::Sandbox::User=root)
  apt-get "${APT[@]}" update -q
  (cd "$CUDA12_DIR/debs" && apt-get "${APT[@]}" download "nvidia-cuda-toolkit=$DEB_NVCC" \
     "nvidia-cuda-dev=$DEB_DEV")

  echo "== unpack"
  rm -rf "$CUDA12_DIR/pkgs" "$TK" && mkdir -p "$CUDA12_DIR/pkgs" "$TK"/{bin,nvvm/bin,include,lib64}
  for w in "$CUDA12_DIR"/wheels/*.whl; do unzip -q -o "$w" -d "$CUDA12_DIR/pkgs/pypi"; done
  dpkg -x "$CUDA12_DIR"/debs/nvidia-cuda-toolkit_"$DEB_NVCC"_amd64.deb "$CUDA12_DIR/pkgs/deb"
  dpkg-deb --fsys-tarfile "$CUDA12_DIR"/debs/nvidia-cuda-dev_"$DEB_DEV"_amd64.deb |
    tar -x -C "$CUDA12_DIR/pkgs/deb" ./usr/lib/x86_64-linux-gnu/libcudart_static.a \
      ./usr/lib/x86_64-linux-gnu/libcudadevrt.a

  echo "== assemble $TK"
  deb=$CUDA12_DIR/pkgs/deb/usr
  py=$CUDA12_DIR/pkgs/pypi/nvidia
  # Compiler: Debian's copies of NVIDIA's binaries (a real file for nvcc: it finds nvcc.profile
  # and its tools next to itself).
  cp "$deb"/lib/nvidia-cuda-toolkit/bin/nvcc "$TK/bin/"
  cp -r "$deb"/lib/nvidia-cuda-toolkit/bin/crt "$TK/bin/"
  cp "$deb"/lib/nvidia-cuda-toolkit/bin/cicc "$TK/nvvm/bin/"
  for t in cudafe++ fatbinary nvlink ptxas bin2c nvprune cuobjdump cu++filt; do
    cp "$deb/bin/$t" "$TK/bin/"
  done
  cp -r "$deb"/lib/nvidia-cuda-toolkit/libdevice "$TK/nvvm/"
  cat >"$TK/bin/nvcc.profile" <<'EOF'
TOP              = $(_HERE_)/..
NVVMIR_LIBRARY_DIR = $(TOP)/nvvm/libdevice
LD_LIBRARY_PATH += $(TOP)/lib64:
PATH            += $(TOP)/nvvm/bin:$(_HERE_):
INCLUDES        +=  "-I$(TOP)/include" $(_SPACE_)
LIBRARIES        =+ $(_SPACE_) "-L$(TOP)/lib64/stubs" "-L$(TOP)/lib64"
CUDAFE_FLAGS    +=
PTXAS_FLAGS     +=
EOF
  # Headers and libraries: the wheels.
  for p in cuda_runtime cuda_nvcc cuda_cccl cublas nvtx; do
    cp -r "$py/$p/include/." "$TK/include/"
  done
  find "$TK/include" -name __init__.py -delete
  for lib in "$py"/cuda_runtime/lib/libcudart.so.12 "$py"/cublas/lib/libcublas.so.12 \
             "$py"/cublas/lib/libcublasLt.so.12 "$py"/nvtx/lib/libnvToolsExt.so.1; do
    cp "$lib" "$TK/lib64/"
    base=$(basename "$lib"); ln -sf "$base" "$TK/lib64/${base%.so.*}.so"
  done
  cp "$deb"/lib/x86_64-linux-gnu/{libcudart_static.a,libcudadevrt.a} "$TK/lib64/"
  rm -rf "$CUDA12_DIR"/{pkgs,debs,wheels}   # 2 GB of downloads; the toolkit holds what it needs
fi
if [[ $HEADERS == 12.2 ]]; then
  TKH=$CUDA12_DIR/toolkit-headers12.2
  if [[ ! -f $TKH/include/cub/version.cuh ]]; then
    echo "== $TKH: the 12.4.1 toolkit with CUDA 12.2.0's runtime headers, CUB and Thrust"
    rm -rf "$TKH" && cp -r "$TK" "$TKH"
    rm -rf "$TKH"/include/{cub,thrust}
    # PyPI's CCCL wheels of 12.2 and 12.3 lack libcu++'s extension-less headers (cuda/std/utility,
    # ...; 12.3's was yanked for it): CUB and Thrust come from 12.2.0, libcu++ stays 12.4.1's.
    mkdir -p "$CUDA12_DIR/wheels-12.2"
    python3 -m pip download -q --no-deps --only-binary=:all: --platform manylinux2014_x86_64 \
      -d "$CUDA12_DIR/wheels-12.2" nvidia-cuda-runtime-cu12==12.2.53 nvidia-cuda-cccl-cu12==12.2.53
    for w in "$CUDA12_DIR"/wheels-12.2/*.whl; do unzip -q -o "$w" -d "$CUDA12_DIR/wheels-12.2/x"; done
    cp -r "$CUDA12_DIR/wheels-12.2/x/nvidia/cuda_runtime/include/." "$TKH/include/"
    cp -r "$CUDA12_DIR/wheels-12.2/x/nvidia/cuda_cccl/include/"{cub,thrust} "$TKH/include/"
    find "$TKH/include" -name __init__.py -delete
    rm -rf "$CUDA12_DIR/wheels-12.2"
  fi
  TK=$TKH
  export CUDACXX=$TK/bin/nvcc
  grep -h 'define \(CUDART_VERSION\|CUB_VERSION\) ' "$TK"/include/cuda_runtime_api.h "$TK"/include/cub/version.cuh
fi
"$TK/bin/nvcc" --version | tail -2

echo "== configure $BUILD_DIR"
cmake -S "$SRC" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_COMPILER="$TK/bin/nvcc" -DCUDAToolkit_ROOT="$TK" \
  -DCMAKE_BUILD_RPATH="$TK/lib64" "$@"
# CMake goes on when its CUDA ABI check fails, but then links without the toolkit's library dirs.
if ! grep -q 'set(CMAKE_CUDA_COMPILER_ABI "ELF")' "$BUILD_DIR"/CMakeFiles/*/CMakeCUDACompiler.cmake; then
  echo "CMake's CUDA ABI check failed: see $BUILD_DIR/CMakeFiles/CMakeError.log" >&2; exit 1
fi
echo "== build"
cmake --build "$BUILD_DIR" -j "$JOBS"

echo "== check: nothing from another CUDA"
foreign=$(cd "$BUILD_DIR" && ninja -t deps | grep -E '^ +/' | sort -u |
          grep -vE "^ +($TK|$SRC|$BUILD_DIR)/|^ +/usr/(include|lib/gcc)/" || true)
if [[ -n $foreign ]]; then echo "headers from outside the toolkit:"; echo "$foreign"; exit 1; fi
checked=0
for exe in $(find "$BUILD_DIR" -type f -executable -name '*_*' ! -name '*.so*' -path '*/bin/*' -o \
             -type f -executable -path '*/tests/*_tests'); do
  if readelf -d "$exe" | grep -E 'NEEDED.*lib(cudart|cublas|cublasLt|nvToolsExt)\.so' |
     grep -vqE 'libcudart\.so\.12|libcublas(Lt)?\.so\.12|libnvToolsExt\.so\.1'; then
    echo "$exe needs a CUDA library that is not 12.x:"; readelf -d "$exe" | grep NEEDED; exit 1
  fi
  checked=$((checked + 1))
done
echo "ok: every header from $TK, $SRC or the system; CUDA libraries of $checked programs all 12.x"
if [[ ${SKIP_TESTS:-0} != 1 ]]; then
  echo "== ctest -L cpu"
  (cd "$BUILD_DIR" && LD_LIBRARY_PATH="$TK/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
     ctest -L cpu --output-on-failure)
fi
