# Per-target switches, in the spirit of spdlog's helper functions.

function(rowpump_enable_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                                           -Wno-sign-conversion)
  if(ROWPUMP_WARNINGS_AS_ERRORS)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

function(rowpump_enable_sanitizers target)
  if(ROWPUMP_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=address,undefined -fno-omit-frame-pointer
                                             -fno-sanitize-recover=undefined)
    target_link_options(${target} PRIVATE -fsanitize=address,undefined)
  endif()
endfunction()

# Warnings and sanitizers together: what every first-party target gets.
function(rowpump_target_defaults target)
  rowpump_enable_warnings(${target})
  rowpump_enable_sanitizers(${target})
endfunction()
