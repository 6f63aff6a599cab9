# Runs scdoc on INPUT into OUTPUT (scdoc reads stdin and writes stdout); fails naming the file.
execute_process(COMMAND ${SCDOC} INPUT_FILE ${INPUT} OUTPUT_FILE ${OUTPUT}.tmp
                ERROR_VARIABLE error RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  file(REMOVE ${OUTPUT}.tmp)
  message(FATAL_ERROR "scdoc failed on ${INPUT}: ${error}")
endif()
file(RENAME ${OUTPUT}.tmp ${OUTPUT})
