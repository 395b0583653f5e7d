# Builds the raw-API port's host tests (tests/lwip/raw) with the host's compilers: lwIP 2.1's core
# from Debian's source package (fetched by run.sh) configured by tests/lwip/raw/lwipopts.h, the port
# as C99 under the library's warnings as errors, and the tests. Run from the repository root:
#   make -f tests/lwip/raw/host.mk RAW_BUILD=DIR LWIP_DIR=DIR/src/lwip [CC=cc] [CXX=c++]
#        [PORT_EXTRA_FLAGS=...]
# PORT_EXTRA_FLAGS go to the port's compile and to the links (a coverage build's --coverage).
# Output: $(RAW_BUILD)/test_lwip_raw_dns and $(RAW_BUILD)/test_lwip_raw_port.
RAW_BUILD ?= build/lwip-raw
LWIP_DIR ?= $(RAW_BUILD)/src/lwip
RAW_DIR := tests/lwip/raw

CPPFLAGS := -Iinclude -I$(RAW_DIR) -Itests/board -I$(LWIP_DIR)/src/include
lists = $(shell sh scripts/sources.sh $(1))
PORT_EXTRA_FLAGS ?=
PORT_CFLAGS := -std=c99 -g -O1 $(call lists,RESPLOCK_WARNING_FLAGS) -Werror $(PORT_EXTRA_FLAGS)
TEST_CXXFLAGS := -std=c++17 -g -O1 -Wall -Wextra -Wshadow -Werror -Itests/support
# lwIP is another project's code, built as its own build would: not held to our warnings.
LWIP_CFLAGS := -std=gnu99 -g -O1 -w

LWIPDIR := $(LWIP_DIR)/src
include $(LWIP_DIR)/src/Filelists.mk
LWIP_SRC := $(COREFILES) $(CORE4FILES)
PORT_SRC := $(call lists,RESPLOCK_LWIP_RAW_SOURCES)
# The port's test talks to a real redis-server, started by tests/support's helpers, through
# host_link.cpp (a loopback socket, apart from lwIP's headers).
SUPPORT_SRC := tests/support/redis_server.cpp tests/support/process.cpp $(RAW_DIR)/host_link.cpp

LWIP_OBJ := $(patsubst $(LWIP_DIR)/%.c,$(RAW_BUILD)/obj/lwip/%.o,$(LWIP_SRC))
PORT_OBJ := $(patsubst %,$(RAW_BUILD)/obj/%.o,$(PORT_SRC))
obj = $(patsubst %,$(RAW_BUILD)/obj/%.o,$(1))
COMMON_OBJ := $(LWIP_OBJ) $(PORT_OBJ) $(call obj,tests/support/check_main.cpp $(RAW_DIR)/host_stack.cpp)

.DEFAULT_GOAL := all
all: $(RAW_BUILD)/test_lwip_raw_dns $(RAW_BUILD)/test_lwip_raw_port

$(RAW_BUILD)/test_lwip_raw_dns: $(COMMON_OBJ) $(call obj,$(RAW_DIR)/test_lwip_raw_dns.cpp)
	$(CXX) -o $@ $^ $(PORT_EXTRA_FLAGS)
$(RAW_BUILD)/test_lwip_raw_port: $(COMMON_OBJ) $(call obj,$(RAW_DIR)/test_lwip_raw_port.cpp \
                                                          $(SUPPORT_SRC))
	$(CXX) -o $@ $^ $(PORT_EXTRA_FLAGS)

$(RAW_BUILD)/obj/lwip/%.o: $(LWIP_DIR)/%.c
	@mkdir -p $(dir $@)
	$(CC) $(LWIP_CFLAGS) $(CPPFLAGS) -MMD -MP -c $< -o $@
$(RAW_BUILD)/obj/ports/%.c.o: ports/%.c
	@mkdir -p $(dir $@)
	$(CC) $(PORT_CFLAGS) $(CPPFLAGS) -MMD -MP -c $< -o $@
$(RAW_BUILD)/obj/tests/%.cpp.o: tests/%.cpp
	@mkdir -p $(dir $@)
	$(CXX) $(TEST_CXXFLAGS) $(CPPFLAGS) -MMD -MP -c $< -o $@

.SECONDARY:
-include $(shell find $(RAW_BUILD)/obj -name '*.d' 2>/dev/null)
