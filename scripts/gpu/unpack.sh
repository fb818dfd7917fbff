# Sourced by the device calls' scripts: unpacks the carried build (.carry/pack.tar.xz from
# scripts/gpu/pack.sh) into /tmp/c/pack, points the binary at this tree's hwdb and puts the
# carried libraries, cuDNN and cuBLASLt (wherever the GPU machine keeps them) on the library path.
mkdir -p /tmp/c && tar xJf .carry/pack.tar.xz -C /tmp/c
export MODELCOST_HWDB=$PWD/hwdb
CUDNN=$(dirname "$(find / -name 'libcudnn.so.9' -not -path '/proc/*' 2>/dev/null | head -1)")
LT=$(dirname "$(find / -name 'libcublasLt.so.13' -not -path '/proc/*' 2>/dev/null | head -1)")
export LD_LIBRARY_PATH=/tmp/c/pack/lib:$CUDNN:$LT:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
