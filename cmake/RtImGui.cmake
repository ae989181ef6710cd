# rt_imgui: Dear ImGui 1.86 as one shared library, made from the objects of Debian's static libimgui.a that the
# studio uses (the core, tables, widgets, std::string helpers and the OpenGL 3 backend; not the SDL, GLFW,
# Allegro, Vulkan or FreeType backends, which would pull in their libraries). The studio, the visualizers and
# every panel plugin link this one copy, so they share ImGui's globals: one current context, one allocator
# (docs/plugins.md, "Panels"). Debian compiles the archive position-independent, so its objects link into a
# shared library as they are.
include_guard(GLOBAL)
set(RT_IMGUI_ARCHIVE /usr/lib/x86_64-linux-gnu/libimgui.a)
if(NOT EXISTS ${RT_IMGUI_ARCHIVE})
  message(FATAL_ERROR "${RT_IMGUI_ARCHIVE} not found: run scripts/setup.sh (installs libimgui-dev)")
endif()
set(RT_IMGUI_MEMBERS imgui.o imgui_draw.o imgui_tables.o imgui_widgets.o imgui_stdlib.o imgui_impl_opengl3.o)
set(RT_IMGUI_OBJECT_DIR ${CMAKE_BINARY_DIR}/imgui_objects)
set(RT_IMGUI_OBJECTS)
foreach(member ${RT_IMGUI_MEMBERS})
  list(APPEND RT_IMGUI_OBJECTS ${RT_IMGUI_OBJECT_DIR}/${member})
endforeach()
add_custom_command(OUTPUT ${RT_IMGUI_OBJECTS}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${RT_IMGUI_OBJECT_DIR}
  COMMAND ${CMAKE_AR} x ${RT_IMGUI_ARCHIVE} ${RT_IMGUI_MEMBERS}
  WORKING_DIRECTORY ${RT_IMGUI_OBJECT_DIR}
  DEPENDS ${RT_IMGUI_ARCHIVE}
  COMMENT "Taking Dear ImGui's objects out of ${RT_IMGUI_ARCHIVE}")
add_library(rt_imgui SHARED ${RT_IMGUI_OBJECTS})
set_source_files_properties(${RT_IMGUI_OBJECTS} PROPERTIES EXTERNAL_OBJECT ON GENERATED ON)
set_target_properties(rt_imgui PROPERTIES LINKER_LANGUAGE CXX)
target_include_directories(rt_imgui SYSTEM INTERFACE /usr/include/imgui)
# stb: the font rasterizer and rectangle packer imgui_draw.o calls; libdl: the backend's GL loader (imgl3w).
# Public: the studio's font loader includes stb_truetype.h too.
find_package(PkgConfig REQUIRED)
pkg_check_modules(RT_STB REQUIRED IMPORTED_TARGET stb)
target_link_libraries(rt_imgui PUBLIC PkgConfig::RT_STB PRIVATE ${CMAKE_DL_LIBS})
target_link_options(rt_imgui PRIVATE -Wl,--no-undefined)
