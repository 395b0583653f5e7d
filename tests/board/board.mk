# Builds the board firmware for QEMU's mps2-an386 (Cortex-M4) with arm-none-eabi-gcc: lwIP 2.1
# from Debian's source package (fetched into the build tree by fetch-source.sh), NO_SYS=1, the
# library, the lwIP raw-API port and the board support; newlib-nano, semihosting, -Os,
# --gc-sections. Run from the repository root:
#   make -f tests/board/board.mk BOARD_BUILD=build/board LWIP_DIR=build/board/src/lwip
# Output: $(BOARD_BUILD)/firmware-plain.elf (and .map).
BOARD_BUILD ?= build/board
LWIP_DIR ?= $(BOARD_BUILD)/src/lwip
CROSS ?= arm-none-eabi-
BOARD_DIR := tests/board

CC := $(CROSS)gcc
CXX := $(CROSS)g++

# The port's receive ring, far smaller than its default, so that the firmware's large reply
# (step 6) goes through the port's back-pressure path.
BOARD_RX_SIZE ?= 64

ARCH := -mcpu=cortex-m4 -mthumb -mfloat-abi=soft
OPT := -Os -g -ffunction-sections -fdata-sections
CPPFLAGS := -Iinclude -Isrc -I$(BOARD_DIR) -I$(LWIP_DIR)/src/include \
    -DRESPLOCK_LWIP_RAW_RX_SIZE=$(BOARD_RX_SIZE)
lists = $(shell sh scripts/sources.sh $(1))
WARN := $(call lists,RESPLOCK_WARNING_FLAGS) -Werror
LIB_CXXFLAGS := -std=c++17 $(WARN) $(call lists,RESPLOCK_CXX_FLAGS)
PORT_CFLAGS := -std=c99 $(WARN)
BOARD_CFLAGS := -std=c99 -Wall -Wextra -Wshadow -Werror
BOARD_CXXFLAGS := -std=c++17 -Wall -Wextra -Wshadow -Werror -fno-exceptions -fno-rtti
# lwIP is another project's code, built as its own build would: not held to our warnings.
LWIP_CFLAGS := -std=gnu99 -w
LDFLAGS := $(ARCH) -nostartfiles --specs=nano.specs --specs=rdimon.specs \
    -T tests/target/cortex-m4/mps2-an386.ld -Wl,--gc-sections

LWIPDIR := $(LWIP_DIR)/src
include $(LWIP_DIR)/src/Filelists.mk
LWIP_SRC := $(COREFILES) $(CORE4FILES) $(LWIPDIR)/netif/ethernet.c

LIB_SRC := $(call lists,RESPLOCK_CORE_SOURCES RESPLOCK_VARIANT_SOURCES)
PORT_SRC := $(call lists,RESPLOCK_LWIP_RAW_SOURCES)
BOARD_C := $(BOARD_DIR)/startup.c $(BOARD_DIR)/board.c
BOARD_CXX := $(BOARD_DIR)/firmware.cpp

obj = $(patsubst %,$(BOARD_BUILD)/obj/%.o,$(1))
LWIP_OBJ := $(patsubst $(LWIP_DIR)/%.c,$(BOARD_BUILD)/obj/lwip/%.o,$(LWIP_SRC))
COMMON_OBJ := $(LWIP_OBJ) $(call obj,$(LIB_SRC) $(PORT_SRC) $(BOARD_C))

all: $(BOARD_BUILD)/firmware-plain.elf

$(BOARD_BUILD)/firmware-plain.elf: $(COMMON_OBJ) $(call obj,$(BOARD_CXX))
	$(CXX) $(LDFLAGS) -Wl,-Map,$(@:.elf=.map) -o $@ $^

$(BOARD_BUILD)/obj/lwip/%.o: $(LWIP_DIR)/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ARCH) $(OPT) $(LWIP_CFLAGS) $(CPPFLAGS) -MMD -MP -c $< -o $@
$(BOARD_BUILD)/obj/src/%.cpp.o: src/%.cpp
	@mkdir -p $(dir $@)
	$(CXX) $(ARCH) $(OPT) $(LIB_CXXFLAGS) $(CPPFLAGS) -MMD -MP -c $< -o $@
$(BOARD_BUILD)/obj/ports/%.c.o: ports/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ARCH) $(OPT) $(PORT_CFLAGS) $(CPPFLAGS) -MMD -MP -c $< -o $@
$(BOARD_BUILD)/obj/$(BOARD_DIR)/%.c.o: $(BOARD_DIR)/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ARCH) $(OPT) $(BOARD_CFLAGS) $(CPPFLAGS) -MMD -MP -c $< -o $@
$(BOARD_BUILD)/obj/$(BOARD_DIR)/%.cpp.o: $(BOARD_DIR)/%.cpp
	@mkdir -p $(dir $@)
	$(CXX) $(ARCH) $(OPT) $(BOARD_CXXFLAGS) $(CPPFLAGS) -MMD -MP -c $< -o $@

.PHONY: all
.SECONDARY:
-include $(shell find $(BOARD_BUILD)/obj -name '*.d' 2>/dev/null)
