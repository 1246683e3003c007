# Embeds the HTML report's template files into the heaphook command:
#   cmake -DSRC=<html_assets dir> -DOUT=<file.c> -P embed.cmake
# writes OUT with, for each of page.html, page.css and page.js,
#   const unsigned char hh_asset_page_html[]; const size_t hh_asset_page_html_len;
# (a NUL after the bytes, not counted). The CSS and JS go inside <style> and
# <script> elements, so they must not contain "</style" or "</script".
set(files page.html page.css page.js)
set(text "/* Generated from src/cli/html_assets/ by embed.cmake: do not edit. */\n#include <stddef.h>\n")
foreach(name ${files})
  file(READ "${SRC}/${name}" content)
  string(TOLOWER "${content}" lower)
  if(NOT name STREQUAL "page.html")
    foreach(bad "</script" "</style" "<!--")
      string(FIND "${lower}" "${bad}" at)
      if(NOT at EQUAL -1)
        message(FATAL_ERROR "${SRC}/${name} contains \"${bad}\", which would end its element early")
      endif()
    endforeach()
  endif()
  file(READ "${SRC}/${name}" hex HEX)
  string(LENGTH "${hex}" n)
  math(EXPR len "${n} / 2")
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  string(REGEX REPLACE "((0x..,){20})" "\\1\n" bytes "${bytes}")
  string(MAKE_C_IDENTIFIER "${name}" id)
  string(APPEND text "const unsigned char hh_asset_${id}[] = {\n${bytes}0};\n"
                     "const size_t hh_asset_${id}_len = ${len};\n")
endforeach()
file(WRITE "${OUT}.tmp" "${text}")
file(RENAME "${OUT}.tmp" "${OUT}")
