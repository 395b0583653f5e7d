# Builds the mock-port unit tests (every test_*.cpp and test_*.c under tests/unit, in any
# subfolder) as Cortex-M programs for QEMU's MPS2 boards: newlib-nano, semihosting (rdimon) for
# printf and the exit status. M4_CORE picks the core (run.sh names the board that runs it):
#   cortex-m4 (default)  -mcpu=cortex-m4, mps2-an386.ld; runs on mps2-an386
#   cortex-m0plus        -mcpu=cortex-m0plus (ARMv6-M code), mps2-an386.ld, start-up with the
#                        unaligned-access and divide-by-zero traps on; runs on mps2-an386's M4
#   cortex-m33           -mcpu=cortex-m33, mps2-an505.ld (secure state); runs on mps2-an505
# Run from the repository root (the top Makefile's `cortex-m4-tests` target does):
#   make -f tests/target/cortex-m4/unit.mk M4_BUILD=build/cortex-m4 [M4_CORE=cortex-m0plus]
# Output: one program per test source, at the same path under $(M4_BUILD)/unit:
# tests/unit/core/test_lock.cpp gives $(M4_BUILD)/unit/core/test_lock.elf.
M4_BUILD ?= build/cortex-m4
M4_CROSS ?= arm-none-eabi-
M4_DIR := tests/target/cortex-m4

M4_CC := $(M4_CROSS)gcc
M4_CXX := $(M4_CROSS)g++
M4_AR := $(M4_CROSS)ar

M4_CORE ?= cortex-m4
M4_LDSCRIPT.cortex-m4 := $(M4_DIR)/mps2-an386.ld
M4_LDSCRIPT.cortex-m0plus := $(M4_DIR)/mps2-an386.ld
M4_LDSCRIPT.cortex-m33 := $(M4_DIR)/mps2-an505.ld
M4_LDSCRIPT := $(M4_LDSCRIPT.$(M4_CORE))
ifeq (,$(M4_LDSCRIPT))
$(error M4_CORE=$(M4_CORE): cortex-m4, cortex-m0plus or cortex-m33)
endif
M4_STARTUP_DEFS := $(if $(filter cortex-m0plus,$(M4_CORE)),-DSTARTUP_STRICT_TRAPS)
# Soft float: nothing under test uses floating point, and start-up need not enable the FPU.
M4_ARCH := -mcpu=$(M4_CORE) -mthumb -mfloat-abi=soft
M4_OPT := -O2 -g -ffunction-sections -fdata-sections
M4_CPPFLAGS := -Iinclude -Isrc -Itests/support
# The library and the mock port keep the library's flags (cmake/resplock-sources.cmake); tests
# keep the host's test flags.
m4_list = $(shell sh scripts/sources.sh $(1))
M4_LIB_CXXFLAGS := -std=c++17 $(call m4_list,RESPLOCK_WARNING_FLAGS RESPLOCK_CXX_FLAGS) -Werror
M4_TEST_CXXFLAGS := -std=c++17 -Wall -Wextra -Wshadow -Werror -fno-exceptions -fno-rtti
M4_TEST_CFLAGS := -std=c99 -Wall -Wextra -Wshadow -Werror
M4_STARTUP_CFLAGS := -std=c99 -Wall -Wextra -Wpedantic -Wconversion -Wshadow -Werror
M4_LDFLAGS := $(M4_ARCH) -nostartfiles --specs=rdimon.specs \
    -T $(M4_LDSCRIPT) -Wl,--gc-sections

M4_LIB_SRC := $(call m4_list,RESPLOCK_CORE_SOURCES RESPLOCK_VARIANT_SOURCES RESPLOCK_C_API_SOURCES \
    RESPLOCK_MOCK_SOURCES)
M4_TESTS_CXX := $(shell find tests/unit -name 'test_*.cpp' | LC_ALL=C sort)
M4_TESTS_C := $(shell find tests/unit -name 'test_*.c' | LC_ALL=C sort)

M4_LIB_OBJ := $(patsubst %.cpp,$(M4_BUILD)/obj/%.o,$(M4_LIB_SRC))
M4_CHECK_OBJ := $(M4_BUILD)/obj/tests/support/check_main.o
M4_STARTUP_OBJ := $(M4_BUILD)/obj/$(M4_DIR)/startup.o
M4_ELF := $(patsubst tests/unit/%.cpp,$(M4_BUILD)/unit/%.elf,$(M4_TESTS_CXX)) \
    $(patsubst tests/unit/%.c,$(M4_BUILD)/unit/%.elf,$(M4_TESTS_C))

all: $(M4_ELF)

# Archives, so that a test with its own main() does not pull check_main in.
$(M4_BUILD)/libresplock_mock.a: $(M4_LIB_OBJ)
	@rm -f $@
	$(M4_AR) rcs $@ $^
$(M4_BUILD)/libcheck.a: $(M4_CHECK_OBJ)
	@rm -f $@
	$(M4_AR) rcs $@ $^

M4_LINK_IN := $(M4_STARTUP_OBJ) $(M4_BUILD)/libcheck.a $(M4_BUILD)/libresplock_mock.a \
    $(M4_LDSCRIPT)

$(M4_BUILD)/unit/%.elf: $(M4_BUILD)/obj/tests/unit/%.o $(M4_LINK_IN)
	@mkdir -p $(dir $@)
	$(M4_CXX) $(M4_LDFLAGS) -Wl,-Map,$(@:.elf=.map) -o $@ $< $(M4_STARTUP_OBJ) \
	    $(M4_BUILD)/libcheck.a $(M4_BUILD)/libresplock_mock.a

$(M4_BUILD)/obj/src/%.o $(M4_BUILD)/obj/ports/%.o: M4_FLAGS = $(M4_LIB_CXXFLAGS)
$(M4_BUILD)/obj/tests/%.o: M4_FLAGS = $(M4_TEST_CXXFLAGS)

$(M4_BUILD)/obj/%.o: %.cpp
	@mkdir -p $(dir $@)
	$(M4_CXX) $(M4_ARCH) $(M4_OPT) $(M4_FLAGS) $(M4_CPPFLAGS) -MMD -MP -c $< -o $@

$(M4_BUILD)/obj/tests/unit/%.o: tests/unit/%.c
	@mkdir -p $(dir $@)
	$(M4_CC) $(M4_ARCH) $(M4_OPT) $(M4_TEST_CFLAGS) $(M4_CPPFLAGS) -MMD -MP -c $< -o $@

$(M4_STARTUP_OBJ): $(M4_DIR)/startup.c
	@mkdir -p $(dir $@)
	$(M4_CC) $(M4_ARCH) $(M4_OPT) $(M4_STARTUP_CFLAGS) $(M4_STARTUP_DEFS) -MMD -MP -c $< -o $@

.PHONY: all
.SECONDARY:
-include $(M4_LIB_OBJ:.o=.d) $(M4_CHECK_OBJ:.o=.d) $(M4_STARTUP_OBJ:.o=.d) \
    $(patsubst %.elf,%.d,$(subst $(M4_BUILD)/unit/,$(M4_BUILD)/obj/tests/unit/,$(M4_ELF)))
