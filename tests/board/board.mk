# Builds the board firmware for one of QEMU's MPS2 boards with arm-none-eabi-gcc: lwIP 2.1 from
# Debian's source package (fetched into the build tree by fetch-source.sh), NO_SYS=1, the
# library, the lwIP raw-API port and the board support; newlib-nano, semihosting, -Os,
# --gc-sections. BOARD picks the board, one firmware source for both:
#   an386 (default)  mps2-an386: -mcpu=cortex-m4, mps2-an386.ld
#   an505            mps2-an505: -mcpu=cortex-m33, mps2-an505.ld (secure state)
# (their peripheral addresses and clocks are board.h's). Run from the repository root:
#   make -f tests/board/board.mk BOARD=an505 BOARD_BUILD=build/board/an505 \
#       LWIP_DIR=build/board/src/lwip [MBEDTLS_DIR=build/board/src/mbedtls]
# Output: $(BOARD_BUILD)/firmware-plain.elf, and with MBEDTLS_DIR (mbedTLS 2.28 from Debian's
# source package) $(BOARD_BUILD)/firmware-tls.elf: the same firmware over the mbedTLS port
# wrapping the raw-API port (each with its .map).
BOARD ?= an386
BOARD_BUILD ?= build/board/$(BOARD)
LWIP_DIR ?= build/board/src/lwip
CROSS ?= arm-none-eabi-
BOARD_DIR := tests/board

CC := $(CROSS)gcc
CXX := $(CROSS)g++

# The port's receive ring, far smaller than its default, so that the firmware's large reply
# (step 6) goes through the port's back-pressure path.
BOARD_RX_SIZE ?= 64

# Per board: the core, and the define that picks board.h's addresses and clock. The linker
# script is the unit tests' for the same board.
BOARD_CPU.an386 := cortex-m4
BOARD_CPU.an505 := cortex-m33
BOARD_DEFINE.an386 := -DBOARD_MPS2_AN386
BOARD_DEFINE.an505 := -DBOARD_MPS2_AN505
BOARD_CPU := $(BOARD_CPU.$(BOARD))
ifeq (,$(BOARD_CPU))
$(error BOARD=$(BOARD): an386 or an505)
endif
BOARD_DEFINE := $(BOARD_DEFINE.$(BOARD))
BOARD_LDSCRIPT := tests/target/cortex-m4/mps2-$(BOARD).ld

ARCH := -mcpu=$(BOARD_CPU) -mthumb -mfloat-abi=soft
OPT := -Os -g -ffunction-sections -fdata-sections
CPPFLAGS := -Iinclude -Isrc -I$(BOARD_DIR) -I$(LWIP_DIR)/src/include \
    -DRESPLOCK_LWIP_RAW_RX_SIZE=$(BOARD_RX_SIZE) $(BOARD_DEFINE)
lists = $(shell sh scripts/sources.sh $(1))
WARN := $(call lists,RESPLOCK_WARNING_FLAGS) -Werror
LIB_CXXFLAGS := -std=c++17 $(WARN) $(call lists,RESPLOCK_CXX_FLAGS)
PORT_CFLAGS := -std=c99 $(WARN)
BOARD_CFLAGS := -std=c99 -Wall -Wextra -Wshadow -Werror
BOARD_CXXFLAGS := -std=c++17 -Wall -Wextra -Wshadow -Werror -fno-exceptions -fno-rtti
# lwIP and mbedTLS are other projects' code, built as its own build would: not held to our warnings.
LWIP_CFLAGS := -std=gnu99 -w
LDFLAGS := $(ARCH) -nostartfiles --specs=nano.specs --specs=rdimon.specs \
    -T $(BOARD_LDSCRIPT) -Wl,--gc-sections

LWIPDIR := $(LWIP_DIR)/src
include $(LWIP_DIR)/src/Filelists.mk
LWIP_SRC := $(COREFILES) $(CORE4FILES) $(LWIPDIR)/netif/ethernet.c

LIB_SRC := $(call lists,RESPLOCK_CORE_SOURCES RESPLOCK_VARIANT_SOURCES)
PORT_SRC := $(call lists,RESPLOCK_LWIP_RAW_SOURCES)
BOARD_C := tests/target/cortex-m4/startup.c $(BOARD_DIR)/board.c
BOARD_CXX := $(BOARD_DIR)/firmware.cpp

obj = $(patsubst %,$(BOARD_BUILD)/obj/%.o,$(1))
LWIP_OBJ := $(patsubst $(LWIP_DIR)/%.c,$(BOARD_BUILD)/obj/lwip/%.o,$(LWIP_SRC))
COMMON_OBJ := $(LWIP_OBJ) $(call obj,$(LIB_SRC) $(PORT_SRC) $(BOARD_C))

ELF := $(BOARD_BUILD)/firmware-plain.elf

# The TLS image: mbedTLS (every library source, configured by mbedtls_config.h; unused code is
# dropped at link time) and the mbedTLS port; firmware.cpp again with BOARD_TLS.
ifneq ($(MBEDTLS_DIR),)
TLS_CPPFLAGS := -I$(MBEDTLS_DIR)/include -DMBEDTLS_CONFIG_FILE='"mbedtls_config.h"'
MBEDTLS_SRC := $(sort $(wildcard $(MBEDTLS_DIR)/library/*.c))
MBEDTLS_OBJ := $(patsubst $(MBEDTLS_DIR)/%.c,$(BOARD_BUILD)/obj/mbedtls/%.o,$(MBEDTLS_SRC))
TLS_PORT_SRC := $(call lists,RESPLOCK_MBEDTLS_SOURCES)
TLS_OBJ := $(MBEDTLS_OBJ) $(call obj,$(TLS_PORT_SRC)) $(BOARD_BUILD)/obj/tls/firmware.cpp.o
ELF += $(BOARD_BUILD)/firmware-tls.elf
endif

all: $(ELF)

$(BOARD_BUILD)/firmware-plain.elf: $(COMMON_OBJ) $(call obj,$(BOARD_CXX))
	$(CXX) $(LDFLAGS) -Wl,-Map,$(@:.elf=.map) -o $@ $^
$(BOARD_BUILD)/firmware-tls.elf: $(COMMON_OBJ) $(TLS_OBJ)
	$(CXX) $(LDFLAGS) -Wl,-Map,$(@:.elf=.map) -o $@ $^

$(BOARD_BUILD)/obj/mbedtls/%.o: $(MBEDTLS_DIR)/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ARCH) $(OPT) $(LWIP_CFLAGS) $(CPPFLAGS) $(TLS_CPPFLAGS) -MMD -MP -c $< -o $@
$(BOARD_BUILD)/obj/ports/mbedtls/%.c.o: ports/mbedtls/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ARCH) $(OPT) $(PORT_CFLAGS) $(CPPFLAGS) $(TLS_CPPFLAGS) -MMD -MP -c $< -o $@
$(BOARD_BUILD)/obj/tls/firmware.cpp.o: $(BOARD_DIR)/firmware.cpp
	@mkdir -p $(dir $@)
	$(CXX) $(ARCH) $(OPT) $(BOARD_CXXFLAGS) $(CPPFLAGS) $(TLS_CPPFLAGS) -DBOARD_TLS -MMD -MP \
	    -c $< -o $@

$(BOARD_BUILD)/obj/lwip/%.o: $(LWIP_DIR)/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ARCH) $(OPT) $(LWIP_CFLAGS) $(CPPFLAGS) -MMD -MP -c $< -o $@
$(BOARD_BUILD)/obj/src/%.cpp.o: src/%.cpp
	@mkdir -p $(dir $@)
	$(CXX) $(ARCH) $(OPT) $(LIB_CXXFLAGS) $(CPPFLAGS) -MMD -MP -c $< -o $@
$(BOARD_BUILD)/obj/ports/%.c.o: ports/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ARCH) $(OPT) $(PORT_CFLAGS) $(CPPFLAGS) -MMD -MP -c $< -o $@
$(BOARD_BUILD)/obj/tests/%.c.o: tests/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ARCH) $(OPT) $(BOARD_CFLAGS) $(CPPFLAGS) -MMD -MP -c $< -o $@
$(BOARD_BUILD)/obj/$(BOARD_DIR)/%.cpp.o: $(BOARD_DIR)/%.cpp
	@mkdir -p $(dir $@)
	$(CXX) $(ARCH) $(OPT) $(BOARD_CXXFLAGS) $(CPPFLAGS) -MMD -MP -c $< -o $@

.PHONY: all
.SECONDARY:
-include $(shell find $(BOARD_BUILD)/obj -name '*.d' 2>/dev/null)
