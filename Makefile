# Builds resplock without CMake, from the same source lists (cmake/resplock-sources.cmake, read by
# scripts/sources.sh).
#   make                               build/libresplock.a (core, variants, C API and the POSIX
#                                      port) and build/resplock, the command-line tool
#   make CROSS=arm-none-eabi- CXXFLAGS="-Os -mcpu=cortex-m4 -mthumb -mfpu=fpv4-sp-d16 \
#        -mfloat-abi=hard -ffunction-sections -fdata-sections"
#                                      build/libresplock.a for a bare-metal target (no POSIX port;
#                                      the float ABI must be the firmware's: -mfloat-abi=soft
#                                      without -mfpu for a soft-float one)
#   make CXX=clang++ BUILD=build/clang another compiler, another output folder
#   make WERROR=1                      warnings as errors (this project's own checks)
#   make clean
# Cortex-M4 proofs with arm-none-eabi-g++ (see tests/target/):
#   make size                          the core: what a minimal firmware of the plain lock links,
#                                      symbol by symbol; flash/RAM per object, worst-case stack
#                                      per public call,
#                                      what a minimal C API firmware links (its link map)
#   make size SIZE_CHECK=1             the same, failing when the core or that firmware is over
#                                      its budget
#   make cortex-m4-tests               the mock-port unit tests run under qemu-system-arm
CROSS ?=
ifeq ($(origin CXX),default)
CXX := $(CROSS)g++
endif
ifeq ($(origin AR),default)
AR := $(CROSS)ar
endif
BUILD ?= build
CXXFLAGS ?= -O2 -g
# The POSIX port and the tool on a hosted target, neither on bare metal.
ifneq (,$(findstring none-eabi,$(CROSS)))
POSIX ?= 0
else
POSIX ?= 1
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
STRICT := -std=c++17 $(call list,RESPLOCK_WARNING_FLAGS RESPLOCK_CXX_FLAGS) \
    $(if $(filter 1,$(WERROR)),-Werror)
CPPFLAGS += -Iinclude -I$(BUILD)/include -Isrc

LIB_OBJ := $(patsubst %.cpp,$(BUILD)/obj/%.o,$(LIB_SRC))
CLI_OBJ := $(patsubst %.cpp,$(BUILD)/obj/%.o,$(CLI_SRC))
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
	$(CXX) $(LDFLAGS) -o $@ $(CLI_OBJ) $(BUILD)/libresplock.a -pthread

$(BUILD)/obj/%.o: %.cpp $(VERSION_H)
	@mkdir -p $(dir $@)
	$(CXX) $(STRICT) $(CPPFLAGS) $(CXXFLAGS) -MMD -MP -c $< -o $@

# The version header CMake would write (cmake/version.h.in), from the same RESPLOCK_VERSION.
$(VERSION_H): cmake/version.h.in cmake/resplock-sources.cmake
	@mkdir -p $(dir $@)
	@v="$(VERSION)"; sed -e "s/@PROJECT_VERSION@/$$v/" -e "s/@PROJECT_VERSION_MAJOR@/$${v%%.*}/" \
	    -e "s/@PROJECT_VERSION_MINOR@/$$(echo $$v | cut -d. -f2)/" \
	    -e "s/@PROJECT_VERSION_PATCH@/$${v##*.}/" $< >$@

clean:
	rm -rf $(BUILD)/obj $(BUILD)/include $(BUILD)/libresplock.a $(BUILD)/resplock

.PHONY: all lib cli clean

# Footprint on a Cortex-M4 (own folder; never mixed with the objects above). The core is what a
# minimal firmware of the plain lock links from the library (firmware_core below), wherever in
# src/ it lives. Budget: core flash
# CORE_FLASH_BUDGET (the plain lock, the hooks to the optional HA routers and replica
# acknowledgement, and reading a reply of any size), core .data+.bss 0 B, 512 B of stack per public call (the port's own stack
# excluded).
# (Target: core flash 4224 B on every Cortex-M core, not met: 4332 B on a Cortex-M4, 4510 B on a
# Cortex-M0+; then 3072 B: docs/footprint.md.)
CORE_FLASH_BUDGET := 4352
SIZE_BUILD ?= $(BUILD)/size-cortex-m4
SIZE_CXX ?= arm-none-eabi-g++
SIZE_FLAGS := -Os -mcpu=cortex-m4 -mthumb -ffunction-sections -fdata-sections
SIZE_ANALYSIS := -fstack-usage -fcallgraph-info=su
# The links take the core and ABI from SIZE_FLAGS, so that an override links the right libraries.
SIZE_LINK_CPU = $(filter -mcpu=% -mthumb -mfloat-abi=% -mfpu=%,$(SIZE_FLAGS))
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
	@python3 tests/target/size_report.py --map $(SIZE_CORE_FIRMWARE).map --build $(SIZE_BUILD) \
	    --compiler "$(SIZE_CXX)" \
	    --flags "$(SIZE_FLAGS) -fno-exceptions -fno-rtti" --max-core-flash $(CORE_FLASH_BUDGET) \
	    $(if $(SIZE_CHECK),--check)
	@python3 tests/target/firmware_size.py $(SIZE_FIRMWARE).map --target-flash $(FIRMWARE_TARGET) \
	    --max-flash $(FIRMWARE_CEILING) $(if $(SIZE_CHECK),--check)
	@python3 tests/target/firmware_size.py $(SIZE_SEM_FIRMWARE).map --name firmware_semaphore \
	    --target-flash $(SEM_FIRMWARE_CEILING) --max-flash $(SEM_FIRMWARE_CEILING) \
	    $(if $(SIZE_CHECK),--check)

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
	$(SIZE_CXX) $(SIZE_LINK_CPU) --specs=nano.specs -nostartfiles \
	    -T tests/target/cortex-m4/mps2-an386.ld -Wl,--gc-sections -Wl,-Map,$@ \
	    -o $(basename $@).elf $(basename $@).o $(SIZE_BUILD)/firmware/libresplock.a

$(SIZE_CORE_FIRMWARE).map: tests/target/cortex-m4/firmware_core.cpp \
    $(SIZE_BUILD)/firmware/libresplock.a tests/target/cortex-m4/mps2-an386.ld $(VERSION_H)
	@mkdir -p $(dir $@)
	$(SIZE_CXX) $(STRICT) -Werror $(CPPFLAGS) $(SIZE_FLAGS) -c $< -o $(SIZE_CORE_FIRMWARE).o
	$(SIZE_CXX) $(SIZE_LINK_CPU) --specs=nano.specs -nostartfiles \
	    -T tests/target/cortex-m4/mps2-an386.ld -Wl,--gc-sections -Wl,-Map,$@ \
	    -o $(SIZE_CORE_FIRMWARE).elf $(SIZE_CORE_FIRMWARE).o $(SIZE_BUILD)/firmware/libresplock.a

$(SIZE_BUILD)/src/%.o: src/%.cpp $(VERSION_H)
	@mkdir -p $(dir $@)
	$(SIZE_CXX) $(STRICT) -Werror $(CPPFLAGS) $(SIZE_FLAGS) $(SIZE_ANALYSIS) -MMD -MP -c $< -o $@

# The unit tests as Cortex-M4 programs (tests/target/cortex-m4/unit.mk), each run under QEMU.
M4_BUILD ?= $(BUILD)/cortex-m4
cortex-m4-tests:
	$(MAKE) -f tests/target/cortex-m4/unit.mk M4_BUILD=$(M4_BUILD)
	@status=0; for elf in $$(find $(M4_BUILD)/unit -name '*.elf' | LC_ALL=C sort); do \
	    sh tests/target/cortex-m4/run.sh run $$elf || status=1; done; exit $$status

.PHONY: size cortex-m4-tests
-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(SIZE_OBJ:.o=.d)
