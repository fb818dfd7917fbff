# The CUDA measurement backend builds where the toolkit is found; without it the core links the
# stub backend that reports "no NVIDIA GPU support in this build". Filled in by the measure stage.
set(MODELCOST_HAVE_CUDA OFF)
