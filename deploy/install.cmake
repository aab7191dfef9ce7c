# Installation and packaging (README "Install"), included by the top-level
# CMakeLists.txt after src/ (its targets must exist).
#
#   cmake --install BUILD [--prefix P]      (DESTDIR=... honoured)
#   cpack -G DEB --config BUILD/CPackConfig.cmake
#
# Layout under the prefix (GNUInstallDirs):
#   bin/                       tierwise, tierwise-agent, tierwise-azsim
#   share/tierwise/web/        the dashboard (tierwise serve finds it as
#                              ../share/tierwise/web next to its binary; the
#                              installed server unit also names it with --web)
#   share/tierwise/pricing/    the bundled data (also compiled in; README there)
#   share/tierwise/policies/   example policies, when the source tree has them
#   share/tierwise/examples/   the simulator's demo scenario
#   share/man/man1/            one page per program, made from its --help
#   share/bash-completion/completions/   one file per program, from its --help
#   lib/systemd/system/        the units, their paths rewritten for the prefix
#   share/doc/tierwise/        README.md
include(GNUInstallDirs)

set(TW_SYSTEMD_UNIT_DIR "lib/systemd/system" CACHE STRING
    "where the systemd units are installed (relative: under the prefix)")
set(TW_BASH_COMPLETION_DIR "${CMAKE_INSTALL_DATADIR}/bash-completion/completions" CACHE STRING
    "where the bash completions are installed (relative: under the prefix)")
# The simulator is installed: README's examples and the demo run against it,
# it lets a new user try the agent and the backend without an Azure
# subscription, and it listens on 127.0.0.0/8 only, so it exposes nothing.
option(TW_INSTALL_AZSIM "install tierwise-azsim, the loopback-only Azure simulator" ON)

set(tw_programs tierwise tierwise-agent)
if(TARGET tierwise-azsim AND TW_INSTALL_AZSIM)
  list(APPEND tw_programs tierwise-azsim)
endif()
install(TARGETS ${tw_programs} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

set(tw_datadir ${CMAKE_INSTALL_DATADIR}/tierwise)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/web/ DESTINATION ${tw_datadir}/web)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/pricing/ DESTINATION ${tw_datadir}/pricing
        FILES_MATCHING PATTERN "*.json" PATTERN "README.md")
# policies/ comes with another part of the project: installed once it is
# there (OPTIONAL: its absence is no error; re-run cmake after adding it).
install(DIRECTORY ${CMAKE_SOURCE_DIR}/policies/ DESTINATION ${tw_datadir}/policies OPTIONAL)
install(FILES ${CMAKE_SOURCE_DIR}/deploy/demo-scenario.json DESTINATION ${tw_datadir}/examples)
install(FILES ${CMAKE_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})

# Man pages and bash completions, made at build time from the programs'
# own --help (deploy/help-docs.sh), so they follow every option added.
set(tw_docs ${CMAKE_BINARY_DIR}/generated/docs)
set(tw_doc_files)
foreach(prog ${tw_programs})
  set(page ${tw_docs}/man1/${prog}.1)
  set(compl ${tw_docs}/completions/${prog})
  add_custom_command(OUTPUT ${page} ${compl}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${tw_docs}/man1 ${tw_docs}/completions
    COMMAND ${CMAKE_SOURCE_DIR}/deploy/help-docs.sh man $<TARGET_FILE:${prog}> ${prog}
            ${PROJECT_VERSION} ${page}
    COMMAND ${CMAKE_SOURCE_DIR}/deploy/help-docs.sh completion $<TARGET_FILE:${prog}> ${prog}
            ${compl}
    DEPENDS ${prog} ${CMAKE_SOURCE_DIR}/deploy/help-docs.sh
    COMMENT "Man page and bash completion of ${prog} from its --help"
    VERBATIM)
  list(APPEND tw_doc_files ${page} ${compl})
  install(FILES ${page} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
  install(FILES ${compl} DESTINATION ${TW_BASH_COMPLETION_DIR})
endforeach()
add_custom_target(tw_docs ALL DEPENDS ${tw_doc_files})

# systemd units: deploy/*.service and *.timer are written for the default
# prefix (/usr/local, so they work as copied by hand, README "systemd").
# Installed, their /usr/local/bin/ and /usr/local/share/ become this
# installation's directories. This runs at install time, not at configure
# time, because the prefix is only known then: `cmake --install --prefix`
# and cpack (which installs under /usr) both change it.
file(GLOB tw_units CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/deploy/*.service
     ${CMAKE_SOURCE_DIR}/deploy/*.timer)
install(CODE "
  set(tw_units \"${tw_units}\")
  set(tw_unit_dir \"${TW_SYSTEMD_UNIT_DIR}\")
  set(tw_bindir \"${CMAKE_INSTALL_BINDIR}\")
  set(tw_datadir \"${CMAKE_INSTALL_DATADIR}\")
  foreach(v tw_unit_dir tw_bindir tw_datadir)
    if(NOT IS_ABSOLUTE \"\${\${v}}\")
      set(\${v} \"\${CMAKE_INSTALL_PREFIX}/\${\${v}}\")
    endif()
  endforeach()
  # A scratch folder of this install's own: two installs at once (a test
  # and cpack) never read each other's half-written units.
  string(RANDOM LENGTH 12 tw_rand)
  set(tw_scratch \"${CMAKE_BINARY_DIR}/generated/units-\${tw_rand}\")
  file(MAKE_DIRECTORY \"\${tw_scratch}\")
  set(tw_out)
  foreach(unit \${tw_units})
    get_filename_component(name \"\${unit}\" NAME)
    file(READ \"\${unit}\" text)
    string(REPLACE \"/usr/local/bin/\" \"\${tw_bindir}/\" text \"\${text}\")
    string(REPLACE \"/usr/local/share/\" \"\${tw_datadir}/\" text \"\${text}\")
    file(WRITE \"\${tw_scratch}/\${name}\" \"\${text}\")
    list(APPEND tw_out \"\${tw_scratch}/\${name}\")
  endforeach()
  file(INSTALL DESTINATION \"\${tw_unit_dir}\" TYPE FILE
       PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ FILES \${tw_out})
  file(REMOVE_RECURSE \"\${tw_scratch}\")
")

# ---- the .deb (cpack -G DEB) ----
set(CPACK_PACKAGE_NAME tierwise)
set(CPACK_PACKAGE_VENDOR "tierwise")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(TW_PACKAGE_CONTACT "tierwise maintainers <root@localhost>" CACHE STRING
    "the .deb's Maintainer field")
set(CPACK_PACKAGE_CONTACT "${TW_PACKAGE_CONTACT}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "measures Azure managed disks against their rated tier, and prices them")
# The extended description (the summary above is its first line).
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "tierwise-agent benchmarks a VM's data disks with the method Azure rates
them by and reports to the backend; tierwise serve keeps the fleet's reports
in SQLite and judges measured against rated figures (REST API, dashboard,
Prometheus metrics); tierwise-azsim simulates Azure on loopback for trying
both. The systemd units of the backend and of the agent's nightly run are
installed but not enabled: see /usr/share/doc/tierwise/README.md.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_GENERATOR DEB)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Run-time libraries: dpkg-shlibdeps (dpkg-dev, which build-essential
# brings) reads them from the binaries, so the list is always what they
# link. Without it, the list of Debian 12's packages for what we link.
find_program(TW_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(TW_DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser")
else()
  message(STATUS "dpkg-shlibdeps not found: the .deb depends on Debian 12's library packages by name")
  set(CPACK_DEBIAN_PACKAGE_DEPENDS
      "adduser, libaio1, libjansson4, libcurl4, libsqlite3-0, libpq5, libmicrohttpd12, libgnutls30, libc6")
endif()
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "fio")
# Maintainer scripts: the system users the units run as and their state
# folders (postinst); the units stopped and disabled on removal (prerm).
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${CMAKE_SOURCE_DIR}/deploy/deb/postinst ${CMAKE_SOURCE_DIR}/deploy/deb/prerm
    ${CMAKE_SOURCE_DIR}/deploy/deb/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)
# A source tarball (make package_source) of the sources only.
set(CPACK_SOURCE_GENERATOR TGZ)
set(CPACK_SOURCE_IGNORE_FILES "/\\\\.git/" "/build/" "/tests/perf/out/")
include(CPack)
