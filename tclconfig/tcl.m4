#------------------------------------------------------------------------
# tclconfig/tcl.m4 --
#
#	A small, self-contained implementation of the Tcl Extension
#	Architecture (TEA) autoconf macros used by tclcprof's configure.ac.
#
#	The macro names, the shell variables they set and the @VAR@
#	substitutions they make follow TEA, so the configure.ac and
#	Makefile.in read like those of any other TEA extension.  Only what
#	tclcprof needs is implemented: Unix-like hosts (Linux first, with
#	BSDs, macOS and Solaris handled in passing), shared libraries built
#	against the Tcl stubs library, and Tcl 8.6.
#
#	This file was written for tclcprof; it is not a copy of Tcl's
#	tclconfig/tcl.m4.
#
# Copyright (c) 2026 The tclcprof authors.
#
# See the file "LICENSE" for information on usage and redistribution of
# this file, and for a DISCLAIMER OF ALL WARRANTIES.
#------------------------------------------------------------------------

# Note on quoting: Tcl code below uses the quadrigraphs @<:@ and @:>@ for
# the square brackets "[" and "]", which m4 would otherwise eat.

#------------------------------------------------------------------------
# TEA_INIT --
#
#	First TEA macro; call it right after AC_INIT.  Works out which TEA
#	platform we build for and prepares the PKG_* lists the TEA_ADD_*
#	macros fill in.
#
# Arguments:
#	$1 (optional)	TEA version the caller was written for.
#
# Results:
#	Sets and substitutes TEA_VERSION, TEA_PLATFORM ("unix" or
#	"windows"), PKG_SOURCES, PKG_OBJECTS, PKG_HEADERS, PKG_INCLUDES,
#	PKG_LIBS, PKG_CFLAGS, PKG_TCL_SOURCES.  Keeps AC_PROG_CC from
#	putting its own "-g -O2" into CFLAGS (TEA_ENABLE_SYMBOLS decides
#	on optimisation), while still honouring a CFLAGS given by the user.
#------------------------------------------------------------------------

AC_DEFUN([TEA_INIT], [
    TEA_VERSION="3.13"
    m4_ifnblank([$1], [
	if test "x$1" != "x${TEA_VERSION}"; then
	    AC_MSG_WARN([configure.ac asks for TEA $1; this tcl.m4 implements the TEA ${TEA_VERSION} interface])
	fi
    ])

    AC_MSG_CHECKING([which TEA platform to build for])
    if test -z "${TEA_PLATFORM}"; then
	case "`(uname -s) 2>/dev/null`" in
	    CYGWIN*|MINGW*|MSYS*|Windows*)	TEA_PLATFORM="windows" ;;
	    *)					TEA_PLATFORM="unix" ;;
	esac
    fi
    AC_MSG_RESULT([${TEA_PLATFORM}])

    # An empty-but-set CFLAGS stops AC_PROG_CC from adding "-g -O2".
    : ${CFLAGS=""}

    PKG_SOURCES=""
    PKG_OBJECTS=""
    PKG_HEADERS=""
    PKG_INCLUDES=""
    PKG_LIBS=""
    PKG_CFLAGS=""
    PKG_TCL_SOURCES=""

    AC_SUBST([TEA_VERSION])
    AC_SUBST([TEA_PLATFORM])
    AC_SUBST([PKG_SOURCES])
    AC_SUBST([PKG_OBJECTS])
    AC_SUBST([PKG_HEADERS])
    AC_SUBST([PKG_INCLUDES])
    AC_SUBST([PKG_LIBS])
    AC_SUBST([PKG_CFLAGS])
    AC_SUBST([PKG_TCL_SOURCES])
])

#------------------------------------------------------------------------
# TEA_PATH_TCLCONFIG --
#
#	Finds the directory holding tclConfig.sh.  --with-tcl=DIR names it
#	explicitly (DIR may also be a Tcl build or install tree, or the
#	tclConfig.sh file itself); otherwise a list of usual places is
#	searched, starting with the library directory reported by an
#	installed tclsh8.6/tclsh.
#
# Results:
#	Sets and substitutes TCL_BIN_DIR (absolute path).
#------------------------------------------------------------------------

AC_DEFUN([TEA_PATH_TCLCONFIG], [
    AC_ARG_WITH([tcl],
	[AS_HELP_STRING([--with-tcl=DIR],
	    [directory containing the Tcl configuration (tclConfig.sh)])],
	[tea_with_tcl="${withval}"], [tea_with_tcl=""])

    AC_MSG_CHECKING([for Tcl configuration])
    AC_CACHE_VAL([tea_cv_tclconfig], [
	tea_cv_tclconfig=""
	if test "x${tea_with_tcl}" = "xno"; then
	    AC_MSG_ERROR([${PACKAGE_NAME} cannot be built without Tcl (--without-tcl given)])
	elif test -n "${tea_with_tcl}" && test "x${tea_with_tcl}" != "xyes"; then
	    # Explicit location: no searching elsewhere.
	    tea_dir="${tea_with_tcl}"
	    case "${tea_dir}" in
		*/tclConfig.sh) tea_dir=`dirname "${tea_dir}"` ;;
	    esac
	    for tea_d in "${tea_dir}" "${tea_dir}/lib" "${tea_dir}/unix"; do
		if test -f "${tea_d}/tclConfig.sh"; then
		    tea_cv_tclconfig=`cd "${tea_d}" && pwd`
		    break
		fi
	    done
	    if test -z "${tea_cv_tclconfig}"; then
		AC_MSG_ERROR([--with-tcl=${tea_with_tcl}: no tclConfig.sh in ${tea_dir}, ${tea_dir}/lib or ${tea_dir}/unix])
	    fi
	else
	    # 1. Where a tclsh on the PATH says Tcl's libraries are.
	    tea_candidates=""
	    for tea_sh in tclsh8.6 tclsh; do
		tea_d=`echo 'puts @<:@::tcl::pkgconfig get libdir,runtime@:>@' | ${tea_sh} 2>/dev/null`
		if test -n "${tea_d}"; then
		    tea_candidates="${tea_candidates} ${tea_d} ${tea_d}/tcl8.6"
		fi
	    done
	    # 2. The chosen installation prefix.
	    if test "x${prefix}" != "xNONE"; then
		tea_candidates="${tea_candidates} ${prefix}/lib ${prefix}/lib/tcl8.6"
	    fi
	    if test "x${exec_prefix}" != "xNONE"; then
		tea_candidates="${tea_candidates} ${exec_prefix}/lib"
	    fi
	    # 3. The usual places.  On Debian-like systems the multiarch
	    #    directory comes before /usr/lib/tcl8.6: the file there only
	    #    forwards to it, and needs dpkg-architecture to do so.
	    tea_multiarch=`(${CC-cc} -print-multiarch) 2>/dev/null`
	    if test -z "${tea_multiarch}"; then
		tea_multiarch=`(gcc -print-multiarch) 2>/dev/null`
	    fi
	    if test -n "${tea_multiarch}"; then
		tea_candidates="${tea_candidates} /usr/lib/${tea_multiarch}/tcl8.6 /usr/lib/${tea_multiarch}"
	    fi
	    tea_candidates="${tea_candidates} \
		/usr/local/lib /usr/local/lib/tcl8.6 \
		/usr/lib/x86_64-linux-gnu/tcl8.6 /usr/lib/aarch64-linux-gnu/tcl8.6 \
		/usr/lib64 /usr/lib64/tcl8.6 \
		/usr/lib/tcl8.6 /usr/lib \
		/usr/pkg/lib /opt/local/lib \
		/opt/homebrew/opt/tcl-tk/lib /usr/local/opt/tcl-tk/lib \
		../tcl8.6/unix ../tcl/unix"
	    for tea_d in ${tea_candidates}; do
		if test -f "${tea_d}/tclConfig.sh"; then
		    tea_cv_tclconfig=`cd "${tea_d}" && pwd`
		    break
		fi
	    done
	fi
    ])

    if test -z "${tea_cv_tclconfig}"; then
	AC_MSG_RESULT([not found])
	AC_MSG_ERROR([cannot find tclConfig.sh: install the Tcl development files (Debian: apt-get install tcl8.6-dev) or give --with-tcl=DIR])
    fi
    TCL_BIN_DIR="${tea_cv_tclconfig}"
    AC_MSG_RESULT([${TCL_BIN_DIR}/tclConfig.sh])
    AC_SUBST([TCL_BIN_DIR])
])

#------------------------------------------------------------------------
# TEA_LOAD_TCLCONFIG --
#
#	Reads ${TCL_BIN_DIR}/tclConfig.sh.  When that file belongs to an
#	(uninstalled) Tcl build tree, the build-tree library locations are
#	used instead of the would-be installed ones.
#
# Results:
#	Substitutes the TCL_* variables extensions use, among them
#	TCL_VERSION, TCL_PATCH_LEVEL, TCL_PREFIX, TCL_EXEC_PREFIX,
#	TCL_SRC_DIR, TCL_INCLUDE_SPEC, TCL_LIB_FILE, TCL_LIB_SPEC,
#	TCL_STUB_LIB_FILE, TCL_STUB_LIB_SPEC, TCL_STUB_LIB_PATH, TCL_LIBS,
#	TCL_DEFS, TCL_SHLIB_CFLAGS, TCL_SHLIB_LD, TCL_SHLIB_SUFFIX.
#------------------------------------------------------------------------

AC_DEFUN([TEA_LOAD_TCLCONFIG], [
    AC_MSG_CHECKING([whether ${TCL_BIN_DIR}/tclConfig.sh can be loaded])
    TCL_VERSION=""
    if test -f "${TCL_BIN_DIR}/tclConfig.sh"; then
	. "${TCL_BIN_DIR}/tclConfig.sh"
    fi
    if test -z "${TCL_VERSION}"; then
	AC_MSG_RESULT([no])
	AC_MSG_ERROR([${TCL_BIN_DIR}/tclConfig.sh did not define TCL_VERSION])
    fi
    AC_MSG_RESULT([yes, Tcl ${TCL_VERSION}${TCL_PATCH_LEVEL}])

    if test -f "${TCL_BIN_DIR}/Makefile"; then
	# A Tcl build directory: link against what was built there.
	AC_MSG_NOTICE([using the Tcl build tree in ${TCL_BIN_DIR}])
	test -n "${TCL_BUILD_LIB_SPEC}" && TCL_LIB_SPEC="${TCL_BUILD_LIB_SPEC}"
	test -n "${TCL_BUILD_STUB_LIB_SPEC}" && TCL_STUB_LIB_SPEC="${TCL_BUILD_STUB_LIB_SPEC}"
	test -n "${TCL_BUILD_STUB_LIB_PATH}" && TCL_STUB_LIB_PATH="${TCL_BUILD_STUB_LIB_PATH}"
    fi

    # Old configuration files refer to ${TCL_DBGX} inside these values.
    eval "TCL_LIB_FILE=\"${TCL_LIB_FILE}\""
    eval "TCL_LIB_SPEC=\"${TCL_LIB_SPEC}\""
    eval "TCL_STUB_LIB_FILE=\"${TCL_STUB_LIB_FILE}\""
    eval "TCL_STUB_LIB_SPEC=\"${TCL_STUB_LIB_SPEC}\""

    if test "${TCL_SUPPORTS_STUBS:-1}" = "0" || test -z "${TCL_STUB_LIB_SPEC}"; then
	AC_MSG_ERROR([this Tcl has no stubs library (TCL_STUB_LIB_SPEC is empty in ${TCL_BIN_DIR}/tclConfig.sh)])
    fi

    AC_SUBST([TCL_VERSION])
    AC_SUBST([TCL_MAJOR_VERSION])
    AC_SUBST([TCL_MINOR_VERSION])
    AC_SUBST([TCL_PATCH_LEVEL])
    AC_SUBST([TCL_PREFIX])
    AC_SUBST([TCL_EXEC_PREFIX])
    AC_SUBST([TCL_SRC_DIR])
    AC_SUBST([TCL_INCLUDE_SPEC])
    AC_SUBST([TCL_LIB_FILE])
    AC_SUBST([TCL_LIB_FLAG])
    AC_SUBST([TCL_LIB_SPEC])
    AC_SUBST([TCL_STUB_LIB_FILE])
    AC_SUBST([TCL_STUB_LIB_FLAG])
    AC_SUBST([TCL_STUB_LIB_SPEC])
    AC_SUBST([TCL_STUB_LIB_PATH])
    AC_SUBST([TCL_LIBS])
    AC_SUBST([TCL_DEFS])
    AC_SUBST([TCL_EXTRA_CFLAGS])
    AC_SUBST([TCL_LD_FLAGS])
    AC_SUBST([TCL_SHLIB_CFLAGS])
    AC_SUBST([TCL_SHLIB_LD])
    AC_SUBST([TCL_SHLIB_LD_LIBS])
    AC_SUBST([TCL_SHLIB_SUFFIX])
])

#------------------------------------------------------------------------
# TEA_PREFIX --
#
#	Unless --prefix / --exec-prefix were given, install where Tcl
#	itself is installed, so that the package lands in a directory on
#	Tcl's default auto_path.
#------------------------------------------------------------------------

AC_DEFUN([TEA_PREFIX], [
    if test "x${prefix}" = "xNONE" && test -n "${TCL_PREFIX}"; then
	AC_MSG_NOTICE([--prefix not given: using Tcl's prefix ${TCL_PREFIX}])
	prefix="${TCL_PREFIX}"
    fi
    if test "x${exec_prefix}" = "xNONE"; then
	if test -n "${TCL_EXEC_PREFIX}" && test "x${prefix}" = "x${TCL_PREFIX}"; then
	    exec_prefix="${TCL_EXEC_PREFIX}"
	else
	    exec_prefix="${prefix}"
	fi
	AC_MSG_NOTICE([--exec-prefix not given: using ${exec_prefix}])
    fi
])

#------------------------------------------------------------------------
# TEA_SETUP_COMPILER --
#
#	Picks the C compiler and the small tools the Makefile needs.
#
# Results:
#	CC, CPP, RANLIB, AR, OBJEXT, EXEEXT and the INSTALL* commands,
#	which always use tclconfig/install-sh so that installing behaves
#	the same on every host.
#------------------------------------------------------------------------

AC_DEFUN([TEA_SETUP_COMPILER], [
    AC_REQUIRE([AC_PROG_CC])
    AC_REQUIRE([AC_PROG_CPP])
    AC_PROG_RANLIB
    AC_CHECK_TOOL([AR], [ar], [ar])

    AC_REQUIRE_AUX_FILE([install-sh])
    INSTALL='$(SHELL) $(srcdir)/tclconfig/install-sh -c'
    INSTALL_DIR='$(INSTALL) -d -m 755'
    INSTALL_DATA='$(INSTALL) -m 644'
    INSTALL_PROGRAM='$(INSTALL) -m 755'
    INSTALL_SCRIPT='$(INSTALL) -m 755'
    INSTALL_LIBRARY='$(INSTALL) -m 755'
    AC_SUBST([INSTALL])
    AC_SUBST([INSTALL_DIR])
    AC_SUBST([INSTALL_DATA])
    AC_SUBST([INSTALL_PROGRAM])
    AC_SUBST([INSTALL_SCRIPT])
    AC_SUBST([INSTALL_LIBRARY])
])

#------------------------------------------------------------------------
# TEA_PUBLIC_TCL_HEADERS --
#
#	Locates tcl.h.  --with-tclinclude=DIR overrides the search, which
#	otherwise tries the directories of TCL_INCLUDE_SPEC, the Tcl source
#	tree and the usual include directories.
#
# Results:
#	Sets and substitutes TCL_INCLUDES ("-I<dir>").
#------------------------------------------------------------------------

AC_DEFUN([TEA_PUBLIC_TCL_HEADERS], [
    AC_ARG_WITH([tclinclude],
	[AS_HELP_STRING([--with-tclinclude=DIR],
	    [directory containing the public Tcl header tcl.h])],
	[tea_with_tclinclude="${withval}"], [tea_with_tclinclude=""])

    AC_MSG_CHECKING([for Tcl public headers])
    tea_candidates=""
    if test -n "${tea_with_tclinclude}" && test "x${tea_with_tclinclude}" != "xyes"; then
	tea_candidates="${tea_with_tclinclude}"
    else
	for tea_w in ${TCL_INCLUDE_SPEC}; do
	    case "${tea_w}" in
		-I*) tea_candidates="${tea_candidates} `echo "${tea_w}" | sed -e 's/^-I//'`" ;;
	    esac
	done
	tea_candidates="${tea_candidates} \
	    ${TCL_SRC_DIR}/generic \
	    ${TCL_PREFIX}/include/tcl${TCL_VERSION} ${TCL_PREFIX}/include \
	    /usr/local/include/tcl${TCL_VERSION} /usr/local/include \
	    /usr/include/tcl${TCL_VERSION} /usr/include"
    fi
    TEA_TCL_PUBLIC_DIR=""
    for tea_d in ${tea_candidates}; do
	if test -f "${tea_d}/tcl.h"; then
	    TEA_TCL_PUBLIC_DIR="${tea_d}"
	    break
	fi
    done
    if test -z "${TEA_TCL_PUBLIC_DIR}"; then
	AC_MSG_RESULT([not found])
	AC_MSG_ERROR([cannot find tcl.h: install the Tcl development files (Debian: apt-get install tcl8.6-dev) or give --with-tclinclude=DIR])
    fi
    AC_MSG_RESULT([${TEA_TCL_PUBLIC_DIR}])

    tea_hver=`sed -n -e 's/^#define@<:@ 	@:>@*TCL_VERSION@<:@ 	@:>@*"\(.*\)".*/\1/p' "${TEA_TCL_PUBLIC_DIR}/tcl.h"`
    if test -n "${tea_hver}" && test "x${tea_hver}" != "x${TCL_VERSION}"; then
	AC_MSG_ERROR([${TEA_TCL_PUBLIC_DIR}/tcl.h is for Tcl ${tea_hver}, but tclConfig.sh is for Tcl ${TCL_VERSION}])
    fi

    TCL_INCLUDES="-I${TEA_TCL_PUBLIC_DIR}"
    AC_SUBST([TCL_INCLUDES])
])

#------------------------------------------------------------------------
# TEA_PRIVATE_TCL_HEADERS --
#
#	Locates Tcl's internal headers (tclInt.h and the platform ones it
#	includes) for extensions that look inside Tcl.  They come from a Tcl
#	source tree (TCL_SRC_DIR) or, on Debian and derivatives, from the
#	copy tcl8.6-dev installs under <include>/tcl8.6/tcl-private.
#
# Results:
#	Prepends "-I<dir>/generic -I<dir>/unix" to TCL_INCLUDES.  Warns when
#	the private headers belong to another Tcl patch level, since
#	internal structure layouts may differ between patch levels.
#------------------------------------------------------------------------

AC_DEFUN([TEA_PRIVATE_TCL_HEADERS], [
    AC_REQUIRE([TEA_PUBLIC_TCL_HEADERS])
    AC_MSG_CHECKING([for Tcl private headers])
    TEA_TCL_PRIVATE_DIR=""
    for tea_d in \
	    "${TCL_SRC_DIR}" \
	    "${TEA_TCL_PUBLIC_DIR}/tcl-private" \
	    "${TCL_PREFIX}/include/tcl${TCL_VERSION}/tcl-private" \
	    "/usr/include/tcl${TCL_VERSION}/tcl-private" \
	    "/usr/local/include/tcl${TCL_VERSION}/tcl-private"; do
	if test -n "${tea_d}" && test -f "${tea_d}/generic/tclInt.h"; then
	    TEA_TCL_PRIVATE_DIR="${tea_d}"
	    break
	fi
    done
    if test -z "${TEA_TCL_PRIVATE_DIR}"; then
	AC_MSG_RESULT([not found])
	AC_MSG_ERROR([cannot find Tcl's private header tclInt.h: install tcl8.6-dev (Debian ships the private headers in /usr/include/tcl8.6/tcl-private) or point --with-tcl at a Tcl ${TCL_VERSION} build tree])
    fi
    AC_MSG_RESULT([${TEA_TCL_PRIVATE_DIR}])

    tea_private="-I${TEA_TCL_PRIVATE_DIR}/generic"
    if test "${TEA_PLATFORM}" = "unix" && test -d "${TEA_TCL_PRIVATE_DIR}/unix"; then
	tea_private="${tea_private} -I${TEA_TCL_PRIVATE_DIR}/unix"
    fi
    TCL_INCLUDES="${tea_private} ${TCL_INCLUDES}"

    # The private headers take some configuration from HAVE_* macros
    # that Tcl's own configure defined when Tcl was built (INT2PTR and
    # PTR2INT, for one, need HAVE_INTPTR_T); define the ones that matter.
    AC_CHECK_TYPES([intptr_t, uintptr_t])
    AC_CHECK_HEADERS([sys/param.h sys/time.h])

    tea_plevel=`sed -n -e 's/^#define@<:@ 	@:>@*TCL_PATCH_LEVEL@<:@ 	@:>@*"\(.*\)".*/\1/p' "${TEA_TCL_PRIVATE_DIR}/generic/tcl.h" 2>/dev/null`
    if test -n "${tea_plevel}" && test "x${tea_plevel}" != "x${TCL_VERSION}${TCL_PATCH_LEVEL}"; then
	AC_MSG_WARN([private headers are from Tcl ${tea_plevel} but the Tcl found is ${TCL_VERSION}${TCL_PATCH_LEVEL}])
    fi
])

#------------------------------------------------------------------------
# TEA_ENABLE_THREADS --
#
#	Tcl 8.6 is always built with threads on Unix, so extensions are
#	too: --disable-threads is accepted but only draws a warning.
#
# Results:
#	Defines TCL_THREADS, _REENTRANT and _THREAD_SAFE, links the threads
#	library if there is a separate one, and substitutes TCL_THREADS.
#	USE_THREAD_ALLOC is deliberately not defined: with it, some
#	tclInt.h macros refer to functions Tcl does not export.
#------------------------------------------------------------------------

AC_DEFUN([TEA_ENABLE_THREADS], [
    AC_ARG_ENABLE([threads],
	[AS_HELP_STRING([--enable-threads],
	    [build with thread support (always on with Tcl 8.6)])],
	[tea_ok="${enableval}"], [tea_ok="yes"])
    if test "x${tea_ok}" = "xno"; then
	case "${TCL_VERSION}" in
	    8.@<:@0-5@:>@) ;;
	    *)
		AC_MSG_WARN([Tcl ${TCL_VERSION} is always threaded: ignoring --disable-threads])
		tea_ok="yes"
		;;
	esac
    fi

    AC_MSG_CHECKING([whether to build with threads])
    if test "x${tea_ok}" = "xyes"; then
	TCL_THREADS=1
	AC_DEFINE([TCL_THREADS], [1], [Build for a threaded Tcl.])
	AC_DEFINE([_REENTRANT], [1], [Use reentrant C library functions.])
	AC_DEFINE([_THREAD_SAFE], [1], [Use thread-safe C library functions.])
	AC_MSG_RESULT([yes])
	AC_CHECK_LIB([pthread], [pthread_mutex_init])
    else
	TCL_THREADS=0
	AC_MSG_RESULT([no])
    fi
    AC_SUBST([TCL_THREADS])
])

#------------------------------------------------------------------------
# TEA_ENABLE_SHARED --
#
#	--disable-shared builds a static library instead of the default
#	shared one.
#
# Results:
#	Sets and substitutes SHARED_BUILD (1 or 0); defines STATIC_BUILD
#	for static builds.
#------------------------------------------------------------------------

AC_DEFUN([TEA_ENABLE_SHARED], [
    AC_ARG_ENABLE([shared],
	[AS_HELP_STRING([--disable-shared],
	    [build a static library instead of a shared one])],
	[tea_ok="${enableval}"], [tea_ok="yes"])
    AC_MSG_CHECKING([how to build the library])
    if test "x${tea_ok}" = "xno"; then
	SHARED_BUILD=0
	AC_DEFINE([STATIC_BUILD], [1], [Build a static library.])
	AC_MSG_RESULT([static])
    else
	SHARED_BUILD=1
	AC_MSG_RESULT([shared])
    fi
    AC_SUBST([SHARED_BUILD])
])

#------------------------------------------------------------------------
# TEA_CONFIG_CFLAGS --
#
#	Compiler and linker settings for building a loadable library on
#	this host.
#
# Results:
#	Substitutes SHLIB_CFLAGS (position-independent code), SHLIB_LD
#	(link a shared library), SHLIB_LD_LIBS, SHLIB_SUFFIX, STLIB_LD,
#	CFLAGS_DEBUG, CFLAGS_OPTIMIZE, CFLAGS_WARNING, LDFLAGS_DEBUG,
#	LDFLAGS_OPTIMIZE.  Defines MODULE_SCOPE (hidden visibility when the
#	compiler has it).  Unresolved symbols are allowed at link time:
#	with stubs, Tcl's functions are reached through its stubs table.
#------------------------------------------------------------------------

AC_DEFUN([TEA_CONFIG_CFLAGS], [
    AC_REQUIRE([TEA_SETUP_COMPILER])

    AC_MSG_CHECKING([the operating system])
    tea_system="`(uname -s) 2>/dev/null`"
    test -z "${tea_system}" && tea_system="unknown"
    AC_MSG_RESULT([${tea_system}])

    STLIB_LD='${AR} cr'
    SHLIB_LD_LIBS='${LIBS}'
    LDFLAGS_DEBUG=""
    LDFLAGS_OPTIMIZE=""
    if test "x${GCC}" = "xyes"; then
	CFLAGS_DEBUG="-g -O0"
	CFLAGS_OPTIMIZE="-O2 -g"
	CFLAGS_WARNING="-Wall -Wextra -Wno-unused-parameter"
    else
	CFLAGS_DEBUG="-g"
	CFLAGS_OPTIMIZE="-O"
	CFLAGS_WARNING=""
    fi

    case "${tea_system}" in
	Linux*|GNU*|FreeBSD*|NetBSD*|OpenBSD*|DragonFly*)
	    SHLIB_CFLAGS="-fPIC"
	    SHLIB_LD='${CC} -shared'
	    SHLIB_SUFFIX=".so"
	    ;;
	Darwin*)
	    SHLIB_CFLAGS="-fno-common"
	    SHLIB_LD='${CC} -dynamiclib -undefined dynamic_lookup'
	    SHLIB_SUFFIX=".dylib"
	    ;;
	SunOS*)
	    if test "x${GCC}" = "xyes"; then
		SHLIB_CFLAGS="-fPIC"
		SHLIB_LD='${CC} -shared'
	    else
		SHLIB_CFLAGS="-KPIC"
		SHLIB_LD='${CC} -G'
	    fi
	    SHLIB_SUFFIX=".so"
	    ;;
	*)
	    # Unknown host: trust what Tcl was built with.
	    SHLIB_CFLAGS="${TCL_SHLIB_CFLAGS}"
	    SHLIB_LD="${TCL_SHLIB_LD}"
	    SHLIB_SUFFIX="${TCL_SHLIB_SUFFIX}"
	    if test -z "${SHLIB_LD}"; then
		AC_MSG_ERROR([do not know how to build a shared library on ${tea_system}])
	    fi
	    ;;
    esac

    AC_CACHE_CHECK([for the visibility("hidden") attribute],
	[tea_cv_cc_visibility_hidden], [
	tea_save_CFLAGS="${CFLAGS}"
	CFLAGS="${CFLAGS} -Werror"
	AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[
	    extern __attribute__((__visibility__("hidden"))) void f(void);
	    void f(void) {}
	]], [[f();]])],
	    [tea_cv_cc_visibility_hidden=yes],
	    [tea_cv_cc_visibility_hidden=no])
	CFLAGS="${tea_save_CFLAGS}"
    ])
    if test "x${tea_cv_cc_visibility_hidden}" = "xyes"; then
	AC_DEFINE([MODULE_SCOPE], [extern __attribute__((__visibility__("hidden")))],
	    [Storage class of symbols shared between the package's files only.])
	AC_DEFINE([HAVE_HIDDEN], [1], [The compiler knows hidden visibility.])
    else
	AC_DEFINE([MODULE_SCOPE], [extern],
	    [Storage class of symbols shared between the package's files only.])
    fi

    AC_SUBST([SHLIB_CFLAGS])
    AC_SUBST([SHLIB_LD])
    AC_SUBST([SHLIB_LD_LIBS])
    AC_SUBST([SHLIB_SUFFIX])
    AC_SUBST([STLIB_LD])
    AC_SUBST([CFLAGS_DEBUG])
    AC_SUBST([CFLAGS_OPTIMIZE])
    AC_SUBST([CFLAGS_WARNING])
    AC_SUBST([LDFLAGS_DEBUG])
    AC_SUBST([LDFLAGS_OPTIMIZE])
])

#------------------------------------------------------------------------
# TEA_ENABLE_SYMBOLS --
#
#	--enable-symbols builds for debugging: -g -O0 and assertions on.
#	--enable-symbols=mem (or =all) also turns on Tcl's memory debugging
#	(TCL_MEM_DEBUG), which needs a Tcl built the same way.  The default
#	is an optimised build with debug information (-O2 -g) and NDEBUG.
#
# Results:
#	Substitutes CFLAGS_DEFAULT and LDFLAGS_DEFAULT, which refer to the
#	CFLAGS_DEBUG/CFLAGS_OPTIMIZE make variables.
#------------------------------------------------------------------------

AC_DEFUN([TEA_ENABLE_SYMBOLS], [
    AC_REQUIRE([TEA_CONFIG_CFLAGS])
    AC_ARG_ENABLE([symbols],
	[AS_HELP_STRING([--enable-symbols@<:@=yes|mem|all@:>@],
	    [build for debugging (-g -O0); "mem" or "all" adds TCL_MEM_DEBUG])],
	[tea_ok="${enableval}"], [tea_ok="no"])
    AC_MSG_CHECKING([whether to build for debugging])
    case "${tea_ok}" in
	no)
	    CFLAGS_DEFAULT='$(CFLAGS_OPTIMIZE)'
	    LDFLAGS_DEFAULT='$(LDFLAGS_OPTIMIZE)'
	    AC_DEFINE([NDEBUG], [1], [Leave out assertions.])
	    AC_MSG_RESULT([no])
	    ;;
	yes)
	    CFLAGS_DEFAULT='$(CFLAGS_DEBUG)'
	    LDFLAGS_DEFAULT='$(LDFLAGS_DEBUG)'
	    AC_MSG_RESULT([yes])
	    ;;
	mem|all)
	    CFLAGS_DEFAULT='$(CFLAGS_DEBUG)'
	    LDFLAGS_DEFAULT='$(LDFLAGS_DEBUG)'
	    AC_DEFINE([TCL_MEM_DEBUG], [1], [Use Tcl's memory debugging.])
	    AC_MSG_RESULT([yes, with TCL_MEM_DEBUG])
	    ;;
	*)
	    AC_MSG_ERROR([--enable-symbols=${tea_ok}: expected yes, no, mem or all])
	    ;;
    esac
    AC_SUBST([CFLAGS_DEFAULT])
    AC_SUBST([LDFLAGS_DEFAULT])
])

#------------------------------------------------------------------------
# TEA_ADD_SOURCES --
#
#	Adds C sources to the library.  Each name is looked for as given
#	(relative to the source directory), then in generic/ and unix/.
#	The object file is named after the source's base name and made in
#	the build directory; the Makefile's VPATH finds the source, so two
#	sources may not share a base name.
#
# Arguments:
#	$1	whitespace-separated list of source files.
#
# Results:
#	Appends to PKG_SOURCES and PKG_OBJECTS.
#------------------------------------------------------------------------

AC_DEFUN([TEA_ADD_SOURCES], [
    for tea_f in $1; do
	tea_found=""
	for tea_d in "" "generic/" "unix/"; do
	    if test -f "${srcdir}/${tea_d}${tea_f}"; then
		tea_found="${tea_d}${tea_f}"
		break
	    fi
	done
	if test -z "${tea_found}"; then
	    AC_MSG_ERROR([cannot find source file '${tea_f}' (looked in ${srcdir}, ${srcdir}/generic and ${srcdir}/unix)])
	fi
	tea_b=`basename "${tea_f}"`
	tea_b=`echo "${tea_b}" | sed -e 's/\.@<:@^.@:>@*$//'`
	tea_o="${tea_b}.\${OBJEXT}"
	for tea_known in ${PKG_OBJECTS}; do
	    if test "x${tea_known}" = "x${tea_o}"; then
		AC_MSG_ERROR([two sources share the base name '${tea_b}' and would make the same object file; rename '${tea_f}'])
	    fi
	done
	PKG_SOURCES="${PKG_SOURCES} ${tea_found}"
	PKG_OBJECTS="${PKG_OBJECTS} ${tea_o}"
    done
])

#------------------------------------------------------------------------
# TEA_ADD_HEADERS --
#
#	Adds public C headers, to be installed with the package.
#
# Arguments:
#	$1	whitespace-separated list, relative to the source directory.
#------------------------------------------------------------------------

AC_DEFUN([TEA_ADD_HEADERS], [
    for tea_f in $1; do
	if test ! -f "${srcdir}/${tea_f}"; then
	    AC_MSG_ERROR([cannot find header file '${srcdir}/${tea_f}'])
	fi
	PKG_HEADERS="${PKG_HEADERS} ${tea_f}"
    done
])

#------------------------------------------------------------------------
# TEA_ADD_INCLUDES, TEA_ADD_LIBS, TEA_ADD_CFLAGS --
#
#	Append compiler/linker words to PKG_INCLUDES, PKG_LIBS and
#	PKG_CFLAGS.  Words may refer to make variables, e.g. ${srcdir}.
#------------------------------------------------------------------------

AC_DEFUN([TEA_ADD_INCLUDES], [
    for tea_w in $1; do
	PKG_INCLUDES="${PKG_INCLUDES} ${tea_w}"
    done
])

AC_DEFUN([TEA_ADD_LIBS], [
    for tea_w in $1; do
	PKG_LIBS="${PKG_LIBS} ${tea_w}"
    done
])

AC_DEFUN([TEA_ADD_CFLAGS], [
    PKG_CFLAGS="${PKG_CFLAGS} $1"
])

#------------------------------------------------------------------------
# TEA_ADD_TCL_SOURCES --
#
#	Adds Tcl scripts that are installed next to the library.  Shell
#	patterns such as library/*.tcl are allowed and kept as patterns, so
#	the Makefile expands them when it runs and a new script is picked
#	up without re-running configure; each pattern must match at least
#	one file now.
#
# Arguments:
#	$1	whitespace-separated list of files or patterns, relative to
#		the source directory.
#------------------------------------------------------------------------

AC_DEFUN([TEA_ADD_TCL_SOURCES], [
    for tea_f in $1; do
	tea_any=`cd "${srcdir}" && for tea_g in ${tea_f}; do test -f "${tea_g}" && echo yes && break; done`
	if test -z "${tea_any}"; then
	    AC_MSG_ERROR([no Tcl source file matches '${srcdir}/${tea_f}'])
	fi
	PKG_TCL_SOURCES="${PKG_TCL_SOURCES} ${tea_f}"
    done
])

#------------------------------------------------------------------------
# TEA_MAKE_LIB --
#
#	Decides how the library is linked and what it is called.  Builds
#	always use the Tcl stubs mechanism: USE_TCL_STUBS is defined (if
#	configure.ac has not done so already) and the stubs library is
#	linked in, so one binary works with every Tcl 8.6.x (or
#	every Tcl 9.x when built against Tcl 9).
#
# Results:
#	Tcl 9's convention names the library of a Tcl 9 build
#	libtcl9NAMEVERSION, so that one directory can hold both builds and
#	pkgIndex.tcl loads the one of the running Tcl.
#
#	Substitutes PKG_LIB_FILE (libNAMEVERSION.so or .a, libtcl9NAME...
#	against Tcl 9), PKG_LIB_FILE8 and PKG_LIB_FILE9 (both names), MAKE_LIB (the
#	link command for it), MAKE_SHARED_LIB, MAKE_STATIC_LIB, and adds
#	TCL_STUB_LIB_SPEC to PKG_LIBS.
#------------------------------------------------------------------------

AC_DEFUN([TEA_MAKE_LIB], [
    AC_REQUIRE([TEA_CONFIG_CFLAGS])
    AC_REQUIRE([TEA_ENABLE_SHARED])
    AC_REQUIRE([TEA_ENABLE_SYMBOLS])

    if grep '^@%:@define USE_TCL_STUBS' confdefs.h >/dev/null 2>&1; then
	:
    else
	AC_DEFINE([USE_TCL_STUBS], [1], [Use the Tcl stubs mechanism.])
    fi
    PKG_LIBS="${PKG_LIBS} ${TCL_STUB_LIB_SPEC}"

    MAKE_SHARED_LIB='${SHLIB_LD} ${CFLAGS_DEFAULT} ${CFLAGS} ${LDFLAGS_DEFAULT} ${LDFLAGS} -o [$]@ ${PKG_OBJECTS} ${SHLIB_LD_LIBS}'
    MAKE_STATIC_LIB='${STLIB_LD} [$]@ ${PKG_OBJECTS}'

    AC_MSG_CHECKING([the library to build])
    if test "${SHARED_BUILD}" = "1"; then
	tea_libsuffix="${SHLIB_SUFFIX}"
	MAKE_LIB="${MAKE_SHARED_LIB}"
	RANLIB_LIB=":"
    else
	tea_libsuffix=".a"
	MAKE_LIB="${MAKE_STATIC_LIB}"
	RANLIB_LIB='${RANLIB}'
    fi
    PKG_LIB_FILE8="lib${PACKAGE_NAME}${PACKAGE_VERSION}${tea_libsuffix}"
    PKG_LIB_FILE9="libtcl9${PACKAGE_NAME}${PACKAGE_VERSION}${tea_libsuffix}"
    if test "${TCL_MAJOR_VERSION}" -ge 9; then
	PKG_LIB_FILE="${PKG_LIB_FILE9}"
    else
	PKG_LIB_FILE="${PKG_LIB_FILE8}"
    fi
    AC_MSG_RESULT([${PKG_LIB_FILE}])

    AC_SUBST([PKG_LIB_FILE])
    AC_SUBST([PKG_LIB_FILE8])
    AC_SUBST([PKG_LIB_FILE9])
    AC_SUBST([MAKE_LIB])
    AC_SUBST([MAKE_SHARED_LIB])
    AC_SUBST([MAKE_STATIC_LIB])
    AC_SUBST([RANLIB_LIB])
])

#------------------------------------------------------------------------
# TEA_PROG_TCLSH --
#
#	Finds a tclsh of the same Tcl version as tclConfig.sh, for running
#	tests and scripts from the Makefile.  A TCLSH_PROG set in the
#	environment is tried first, then Tcl's build tree, Tcl's bin
#	directories and the PATH.
#
# Results:
#	Substitutes TCLSH_PROG.
#------------------------------------------------------------------------

AC_DEFUN([TEA_PROG_TCLSH], [
    AC_MSG_CHECKING([for a tclsh of Tcl ${TCL_VERSION}])
    tea_tclsh=""
    tea_candidates="${TCLSH_PROG} ${TCL_BIN_DIR}/tclsh"
    for tea_d in "${TCL_EXEC_PREFIX}/bin" "${TCL_PREFIX}/bin"; do
	tea_candidates="${tea_candidates} ${tea_d}/tclsh${TCL_VERSION} ${tea_d}/tclsh"
    done
    tea_save_IFS="${IFS}"; IFS="${PATH_SEPARATOR-:}"
    for tea_d in ${PATH}; do
	IFS="${tea_save_IFS}"
	test -z "${tea_d}" && tea_d="."
	tea_candidates="${tea_candidates} ${tea_d}/tclsh${TCL_VERSION} ${tea_d}/tclsh"
    done
    IFS="${tea_save_IFS}"
    for tea_p in ${tea_candidates}; do
	if test -f "${tea_p}" && test -x "${tea_p}"; then
	    tea_v=`echo 'puts @<:@info tclversion@:>@' | "${tea_p}" 2>/dev/null`
	    if test "x${tea_v}" = "x${TCL_VERSION}"; then
		tea_tclsh="${tea_p}"
		break
	    fi
	fi
    done
    if test -z "${tea_tclsh}"; then
	AC_MSG_RESULT([none found])
	AC_MSG_WARN([no tclsh${TCL_VERSION} found; "make test" will need TCLSH_PROG=/path/to/tclsh])
	tea_tclsh="tclsh${TCL_VERSION}"
    else
	AC_MSG_RESULT([${tea_tclsh}])
    fi
    TCLSH_PROG="${tea_tclsh}"
    AC_SUBST([TCLSH_PROG])
])
