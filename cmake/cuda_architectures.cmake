# CUDA architectures: CMAKE_CUDA_ARCHITECTURES when the user (or a parent
# project) chose them; else those of the GPUs present; else, with no GPU to ask,
# Ampere to Hopper as machine code plus Hopper's PTX, which newer GPUs compile
# when they load it. Must run before enable_language(CUDA).
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  set(_archs "")
  find_program(_nvidia_smi nvidia-smi)
  if(_nvidia_smi)
    execute_process(COMMAND ${_nvidia_smi} --query-gpu=compute_cap --format=csv,noheader
      OUTPUT_VARIABLE _caps RESULT_VARIABLE _rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(_rc EQUAL 0 AND _caps)
      string(REPLACE "." "" _caps "${_caps}")
      string(REPLACE "\n" ";" _archs "${_caps}")
      list(REMOVE_DUPLICATES _archs)
    endif()
  endif()
  if(NOT _archs)
    set(_archs 80-real 86-real 89-real 90-real 90-virtual)
  endif()
  set(CMAKE_CUDA_ARCHITECTURES ${_archs} CACHE STRING "CUDA architectures (default: the GPUs present)")
endif()
