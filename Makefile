# Builds resplock without CMake, from the same source lists (cmake/resplock-sources.cmake, read by
# scripts/sources.sh).
#   make                               build/libresplock.a (core, variants, C API and the POSIX
#                                      port) and build/resplock, the command-line tool
#   make CROSS=arm-none-eabi- CXXFLAGS="-Os -mcpu=cortex-m4 -mthumb -mfpu=fpv4-sp-d16 \
#        -mfloat-abi=hard -ffunction-sections -fdata-sections"
#                                      build/libresplock.a for a bare-metal target (no POSIX port;
#                                      the float ABI must be the firmware's: -mfloat-abi=soft
#                                      without -mfpu for a soft-float one)
#   make CROSS=arm-linux-gnueabihf-    any prefix: CROSS is put before g++ and ar. POSIX=1 (the
#                                      POSIX port and the tool) when the prefix names a system
#                                      with POSIX (*-linux-*, darwin, *bsd, cygwin), else POSIX=0
#                                      (the library only: *-none-eabi-, *-elf-, ...); give
#                                      POSIX=0 or POSIX=1 to choose
#   make CXX=clang++ BUILD=build/clang another compiler, another output folder
#   make WERROR=1                      warnings as errors (this project's own checks)
#   make TLS=1 MBEDTLS_DIR=DIR         the tool with rediss:// (ports/mbedtls), against the mbedTLS
#                                      in DIR/include and DIR/lib (the system's without DIR); give
#                                      each choice of TLS and STATIC its own BUILD folder
#   make STATIC=1 LINK="gcc ..."       the tool linked -static, and saying so in --version; LINK
#                                      links it (default: CXX). scripts/static.sh builds it so,
#                                      with musl, for x86-64 and 32-bit ARM
#   make clean
#   make install [PREFIX=/usr/local] [DESTDIR=...]
#                                      the tool, its man page (gzip'd) and its bash and zsh
#                                      completions: bin/resplock, share/man/man1/resplock.1.gz,
#                                      share/bash-completion/completions/resplock,
#                                      share/zsh/vendor-completions/_resplock
# Cortex-M proofs with arm-none-eabi-g++ (see tests/target/):
#   make size [CORE=cortex-m4]         the core: what a minimal firmware of the plain lock links,
#                                      symbol by symbol; flash/RAM per object, worst-case stack
#                                      per public call,
#                                      what a minimal C API firmware links (its link map), for
#                                      CORE = cortex-m0plus, cortex-m4 (default), cortex-m7 or
#                                      cortex-m33, in build/size-<core>; figures named <core>.*
#                                      (cortex_m0plus.core_flash ...). SIZE_FLOAT=hard adds the
#                                      core's FPU (default soft: the library has no floating point)
#   make size SIZE_CHECK=1             the same, failing when the core or that firmware is over
#                                      its budget
#   make footprint [CORE=...]          `make size`, then its figures compared with the core's
#                                      table in docs/footprint.md (fails when they differ)
#   make footprint FOOTPRINT_WRITE=1   the same, rewriting that table from the figures
#   make cortex-m4-tests [CORE=...]    the mock-port unit tests run under qemu-system-arm, for
#                                      CORE = cortex-m4 (default, on mps2-an386), cortex-m0plus
#                                      (ARMv6-M code on mps2-an386, alignment traps on) or
#                                      cortex-m33 (on mps2-an505), in build/<core>
CROSS ?=
ifeq ($(origin CXX),default)
CXX := $(CROSS)g++
endif
ifeq ($(origin AR),default)
AR := $(CROSS)ar
endif
ifeq ($(origin CC),default)
CC := $(CROSS)gcc
endif
LINK ?= $(CXX)
TLS ?= 0
STATIC ?= 0
BUILD ?= build
CXXFLAGS ?= -O2 -g
# POSIX=1: the POSIX port and the tool; POSIX=0: the library only. By default 1 for the host (no
# CROSS) and for a prefix naming an operating system with POSIX (linux, darwin, freebsd, netbsd,
# openbsd, cygwin), 0 for any other prefix: bare metal (arm-none-eabi-, riscv64-unknown-elf-,
# xtensa-esp32-elf-, ...).
POSIX_SYSTEMS := linux darwin freebsd netbsd openbsd cygwin
ifeq (,$(CROSS))
POSIX ?= 1
else ifneq (,$(strip $(foreach os,$(POSIX_SYSTEMS),$(findstring $(os),$(CROSS)))))
POSIX ?= 1
else
POSIX ?= 0
endif

list = $(shell sh scripts/sources.sh $(1))
VERSION := $(call list,RESPLOCK_VERSION)
# The library without a port: what every target builds, and what `make size` measures.
PORTABLE_SRC := $(call list,RESPLOCK_CORE_SOURCES RESPLOCK_VARIANT_SOURCES RESPLOCK_C_API_SOURCES)
LIB_SRC := $(PORTABLE_SRC)
ifeq ($(POSIX),1)
LIB_SRC += $(call list,RESPLOCK_POSIX_SOURCES)
endif
CLI_SRC := $(call list,RESPLOCK_CLI_SOURCES)
# The tool's own objects (and the mbedTLS port's) carry what the build has: TLS, static linking.
CLI_DEFS := $(if $(filter 1,$(TLS)),-DRESPLOCK_CLI_TLS=1) \
    $(if $(filter 1,$(TLS)),$(if $(MBEDTLS_DIR),-I$(MBEDTLS_DIR)/include)) \
    $(if $(filter 1,$(STATIC)),-DRESPLOCK_CLI_STATIC=1)
CLI_LIBS :=
ifeq ($(TLS),1)
CLI_C_SRC := $(call list,RESPLOCK_MBEDTLS_SOURCES)
CLI_LIBS += $(if $(MBEDTLS_DIR),-L$(MBEDTLS_DIR)/lib) -lmbedtls -lmbedx509 -lmbedcrypto
endif
STRICT := -std=c++17 $(call list,RESPLOCK_WARNING_FLAGS RESPLOCK_CXX_FLAGS) \
    $(if $(filter 1,$(WERROR)),-Werror)
CPPFLAGS += -Iinclude -I$(BUILD)/include -Isrc

LIB_OBJ := $(patsubst %.cpp,$(BUILD)/obj/%.o,$(LIB_SRC))
CLI_OBJ := $(patsubst %.cpp,$(BUILD)/obj/%.o,$(CLI_SRC)) \
    $(patsubst %.c,$(BUILD)/obj/%.o,$(CLI_C_SRC))
$(CLI_OBJ): EXTRA_DEFS := $(CLI_DEFS)
VERSION_H := $(BUILD)/include/resplock/version.h

ifeq ($(POSIX),1)
all: lib cli
else
all: lib
endif

lib: $(BUILD)/libresplock.a
cli: $(BUILD)/resplock

$(BUILD)/libresplock.a: $(LIB_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/resplock: $(CLI_OBJ) $(BUILD)/libresplock.a
	$(LINK) $(LDFLAGS) $(if $(filter 1,$(STATIC)),-static) -o $@ $(CLI_OBJ) \
	    $(BUILD)/libresplock.a $(CLI_LIBS) -pthread

$(BUILD)/obj/%.o: %.cpp $(VERSION_H)
	@mkdir -p $(dir $@)
	$(CXX) $(STRICT) $(CPPFLAGS) $(EXTRA_DEFS) $(CXXFLAGS) -MMD -MP -c $< -o $@

# C sources: the mbedTLS port (TLS=1), C99 like the CMake build, the same warnings.
$(BUILD)/obj/%.o: %.c $(VERSION_H)
	@mkdir -p $(dir $@)
	$(CC) -std=c99 $(call list,RESPLOCK_WARNING_FLAGS) $(if $(filter 1,$(WERROR)),-Werror) \
	    $(CPPFLAGS) $(EXTRA_DEFS) $(CFLAGS) -MMD -MP -c $< -o $@

# The version header CMake would write (cmake/version.h.in), from the same RESPLOCK_VERSION.
$(VERSION_H): cmake/version.h.in cmake/resplock-sources.cmake
	@mkdir -p $(dir $@)
	@v="$(VERSION)"; sed -e "s/@PROJECT_VERSION@/$$v/" -e "s/@PROJECT_VERSION_MAJOR@/$${v%%.*}/" \
	    -e "s/@PROJECT_VERSION_MINOR@/$$(echo $$v | cut -d. -f2)/" \
	    -e "s/@PROJECT_VERSION_PATCH@/$${v##*.}/" $< >$@

clean:
	rm -rf $(BUILD)/obj $(BUILD)/include $(BUILD)/libresplock.a $(BUILD)/resplock \
	    $(BUILD)/resplock.1.gz

# The same files, at the same places under PREFIX, as `cmake --install` (cmake/install.cmake).
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MAN1DIR ?= $(PREFIX)/share/man/man1
BASH_COMPLETION_DIR ?= $(PREFIX)/share/bash-completion/completions
ZSH_COMPLETION_DIR ?= $(PREFIX)/share/zsh/vendor-completions
INSTALL ?= install

# gzip -n: no name or time stamp in the header, so the file is the same on every build.
$(BUILD)/resplock.1.gz: tools/resplock/resplock.1
	@mkdir -p $(dir $@)
	gzip -9n -c $< >$@

install: $(BUILD)/resplock $(BUILD)/resplock.1.gz
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MAN1DIR) $(DESTDIR)$(BASH_COMPLETION_DIR) \
	    $(DESTDIR)$(ZSH_COMPLETION_DIR)
	$(INSTALL) -m 755 $(BUILD)/resplock $(DESTDIR)$(BINDIR)/resplock
	$(INSTALL) -m 644 $(BUILD)/resplock.1.gz $(DESTDIR)$(MAN1DIR)/resplock.1.gz
	$(INSTALL) -m 644 tools/resplock/completion/resplock.bash \
	    $(DESTDIR)$(BASH_COMPLETION_DIR)/resplock
	$(INSTALL) -m 644 tools/resplock/completion/_resplock $(DESTDIR)$(ZSH_COMPLETION_DIR)/_resplock

.PHONY: all lib cli clean install

# Footprint on a Cortex-M core (CORE; a folder per core, never mixed with the objects above). The
# core is what a minimal firmware of the plain lock links from the library (firmware_core below),
# wherever in src/ it lives, on every core. Budget: core flash CORE_FLASH_BUDGET (the plain lock
# with the retries of its release, the hooks to the optional HA routers and replica
# acknowledgement, and reading a reply of any size), core .data+.bss 0 B, 512 B of stack per public call (the port's own stack excluded); the
# same on every core (docs/footprint.md).
# The core measured: its -mcpu, and the -mfpu of its hard-float ABI (none on the Cortex-M0+).
SIZE_CORES := cortex-m0plus cortex-m4 cortex-m7 cortex-m33
CORE ?= cortex-m4
ifneq ($(filter $(CORE),$(SIZE_CORES)),$(CORE))
$(error CORE=$(CORE): one of $(SIZE_CORES))
endif
CORE_FPU.cortex-m0plus :=
CORE_FPU.cortex-m4 := fpv4-sp-d16
CORE_FPU.cortex-m7 := fpv5-d16
CORE_FPU.cortex-m33 := fpv5-sp-d16
SIZE_FLOAT ?= soft
ifeq ($(SIZE_FLOAT)$(CORE_FPU.$(CORE)),hard)
$(error SIZE_FLOAT=hard: $(CORE) has no FPU)
endif
SIZE_ARCH := -mcpu=$(CORE) -mthumb $(if $(filter hard,$(SIZE_FLOAT)),\
    -mfpu=$(CORE_FPU.$(CORE)) -mfloat-abi=hard,-mfloat-abi=soft)
# The prefix of the figures: cortex_m0plus.core_flash ...
CORE_LABEL := $(subst -,_,$(CORE))
SIZE_BUILD ?= $(BUILD)/size-$(CORE)
CORE_FLASH_BUDGET := 4352
SIZE_CXX ?= arm-none-eabi-g++
SIZE_FLAGS := -Os $(SIZE_ARCH) -ffunction-sections -fdata-sections
SIZE_ANALYSIS := -fstack-usage -fcallgraph-info=su
SIZE_OBJ := $(patsubst %.cpp,$(SIZE_BUILD)/%.o,$(PORTABLE_SRC))

# What a firmware pays for the C API's try_acquire/extend/release: a minimal firmware linked
# with newlib-nano and --gc-sections, read from its link map (the C run-time it pulls counted).
# Target 4096 B, not met (docs/footprint.md); SIZE_CHECK fails only above FIRMWARE_CEILING, a
# guard against growth.
FIRMWARE_TARGET := 4096
FIRMWARE_CEILING := 5376
SIZE_FIRMWARE := $(SIZE_BUILD)/firmware/firmware_c_api
SIZE_CC ?= arm-none-eabi-gcc
SIZE_AR ?= arm-none-eabi-ar
# The core of the flash budget: what a minimal C++ firmware that uses the plain lock (a Connection
# and a Lock, each of their public calls) links from the library, read from its link map.
SIZE_CORE_FIRMWARE := $(SIZE_BUILD)/firmware/firmware_core
# What a firmware pays for the counting semaphore through the C API (an OTA client: set-up with an
# owner label, try_acquire with its fencing number, extend, release): reported, with a ceiling
# against growth.
SEM_FIRMWARE_CEILING := 12288
SIZE_SEM_FIRMWARE := $(SIZE_BUILD)/firmware/firmware_semaphore

size: $(SIZE_OBJ) $(SIZE_FIRMWARE).map $(SIZE_CORE_FIRMWARE).map $(SIZE_SEM_FIRMWARE).map
	@status=0; \
	python3 tests/target/size_report.py --map $(SIZE_CORE_FIRMWARE).map --build $(SIZE_BUILD) \
	    --compiler "$(SIZE_CXX)" --core $(CORE_LABEL) --max-core-flash $(CORE_FLASH_BUDGET) \
	    --flags "$(SIZE_FLAGS) -fno-exceptions -fno-rtti" $(if $(SIZE_CHECK),--check) || status=1; \
	python3 tests/target/firmware_size.py $(SIZE_FIRMWARE).map --target-flash $(FIRMWARE_TARGET) \
	    --core $(CORE_LABEL) \
	    --max-flash $(FIRMWARE_CEILING) $(if $(SIZE_CHECK),--check) || status=1; \
	python3 tests/target/firmware_size.py $(SIZE_SEM_FIRMWARE).map --name firmware_semaphore \
	    --core $(CORE_LABEL) \
	    --target-flash $(SEM_FIRMWARE_CEILING) --max-flash $(SEM_FIRMWARE_CEILING) \
	    $(if $(SIZE_CHECK),--check) || status=1; \
	exit $$status

# The report kept, then compared with (or, FOOTPRINT_WRITE=1, written into) the core's table in
# docs/footprint.md (tests/target/footprint_table.py).
footprint:
	@mkdir -p $(SIZE_BUILD)
	@$(MAKE) -s --no-print-directory size >$(SIZE_BUILD)/size-report.txt; \
	    status=$$?; cat $(SIZE_BUILD)/size-report.txt; \
	    python3 tests/target/footprint_table.py --core $(CORE_LABEL) --doc docs/footprint.md \
	    $(if $(FOOTPRINT_WRITE),--write) $(SIZE_BUILD)/size-report.txt || status=1; \
	    exit $$status

$(SIZE_BUILD)/firmware/libresplock.a: $(SIZE_OBJ)
	@mkdir -p $(dir $@)
	@rm -f $@
	$(SIZE_AR) rcs $@ $^

# The C firmwares (firmware_c_api.c, firmware_semaphore.c): each its own map.
$(SIZE_BUILD)/firmware/%.map: tests/target/cortex-m4/%.c $(SIZE_BUILD)/firmware/libresplock.a \
    tests/target/cortex-m4/mps2-an386.ld tests/target/cortex-m4/stub_port.h
	@mkdir -p $(dir $@)
	$(SIZE_CC) -std=c99 $(call list,RESPLOCK_WARNING_FLAGS) -Werror $(CPPFLAGS) $(SIZE_FLAGS) \
	    -c $< -o $(basename $@).o
	$(SIZE_CXX) $(SIZE_ARCH) --specs=nano.specs -nostartfiles \
	    -T tests/target/cortex-m4/mps2-an386.ld -Wl,--gc-sections -Wl,-Map,$@ \
	    -o $(basename $@).elf $(basename $@).o $(SIZE_BUILD)/firmware/libresplock.a

$(SIZE_CORE_FIRMWARE).map: tests/target/cortex-m4/firmware_core.cpp \
    $(SIZE_BUILD)/firmware/libresplock.a tests/target/cortex-m4/mps2-an386.ld $(VERSION_H)
	@mkdir -p $(dir $@)
	$(SIZE_CXX) $(STRICT) -Werror $(CPPFLAGS) $(SIZE_FLAGS) -c $< -o $(SIZE_CORE_FIRMWARE).o
	$(SIZE_CXX) $(SIZE_ARCH) --specs=nano.specs -nostartfiles \
	    -T tests/target/cortex-m4/mps2-an386.ld -Wl,--gc-sections -Wl,-Map,$@ \
	    -o $(SIZE_CORE_FIRMWARE).elf $(SIZE_CORE_FIRMWARE).o $(SIZE_BUILD)/firmware/libresplock.a

$(SIZE_BUILD)/src/%.o: src/%.cpp $(VERSION_H)
	@mkdir -p $(dir $@)
	$(SIZE_CXX) $(STRICT) -Werror $(CPPFLAGS) $(SIZE_FLAGS) $(SIZE_ANALYSIS) -MMD -MP -c $< -o $@

# The unit tests as Cortex-M programs (tests/target/cortex-m4/unit.mk), each run under QEMU: the
# Cortex-M4 and the Cortex-M0+ ones on mps2-an386, the Cortex-M33 ones on mps2-an505.
M4_BUILD ?= $(BUILD)/$(CORE)
UNIT_BOARD := $(if $(filter cortex-m33,$(CORE)),mps2-an505,mps2-an386)
cortex-m4-tests:
	$(MAKE) -f tests/target/cortex-m4/unit.mk M4_BUILD=$(M4_BUILD) M4_CORE=$(CORE)
	@status=0; for elf in $$(find $(M4_BUILD)/unit -name '*.elf' | LC_ALL=C sort); do \
	    sh tests/target/cortex-m4/run.sh run $$elf 120 $(UNIT_BOARD) || status=1; done; \
	    exit $$status

.PHONY: size footprint cortex-m4-tests
-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(SIZE_OBJ:.o=.d)
