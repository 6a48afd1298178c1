# sm_90 (Hopper) always, plus the architecture of every GPU present, unless the
# user chose CMAKE_CUDA_ARCHITECTURES. Must run before enable_language(CUDA).
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  set(_archs 90)
  find_program(_nvidia_smi nvidia-smi)
  if(_nvidia_smi)
    execute_process(COMMAND ${_nvidia_smi} --query-gpu=compute_cap --format=csv,noheader
      OUTPUT_VARIABLE _caps RESULT_VARIABLE _rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(_rc EQUAL 0 AND _caps)
      string(REPLACE "." "" _caps "${_caps}")
      string(REPLACE "\n" ";" _caps "${_caps}")
      list(APPEND _archs ${_caps})
      list(REMOVE_DUPLICATES _archs)
    endif()
  endif()
  set(CMAKE_CUDA_ARCHITECTURES ${_archs} CACHE STRING "CUDA architectures")
endif()
