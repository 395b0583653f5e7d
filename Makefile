# Builds resplock without CMake.
#   make                               build/libresplock.a (core + POSIX port) and build/resplock
#   make CROSS=arm-none-eabi- CXXFLAGS="-Os -mcpu=cortex-m4 -mthumb"
#                                      build/libresplock.a for a bare-metal target (core only)
#   make CXX=clang++ BUILD=build/clang another compiler, another output folder
#   make clean
CROSS ?=
ifeq ($(origin CXX),default)
CXX := $(CROSS)g++
endif
ifeq ($(origin AR),default)
AR := $(CROSS)ar
endif
BUILD ?= build
CXXFLAGS ?= -O2 -g
# Ports built into the library: POSIX on a hosted target, none on bare metal.
ifneq (,$(findstring none-eabi,$(CROSS)))
PORTS ?=
else
PORTS ?= posix
endif

STRICT := -std=c++17 -Wall -Wextra -Wpedantic -Wconversion -Wshadow -Werror -fno-exceptions -fno-rtti
CPPFLAGS += -Iinclude $(foreach p,$(PORTS),-Iports/$(p))

CORE_SRC := src/status.cpp src/resp.cpp src/connection.cpp src/lock.cpp src/resplock_c.cpp
PORT_SRC := $(foreach p,$(PORTS),$(wildcard ports/$(p)/*.cpp))
CLI_SRC := $(wildcard tools/resplock/*.cpp)
LIB_OBJ := $(patsubst %.cpp,$(BUILD)/obj/%.o,$(CORE_SRC) $(PORT_SRC))
CLI_OBJ := $(patsubst %.cpp,$(BUILD)/obj/%.o,$(CLI_SRC))

ifneq (,$(filter posix,$(PORTS)))
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
	$(CXX) $(LDFLAGS) -o $@ $(CLI_OBJ) $(BUILD)/libresplock.a

$(BUILD)/obj/%.o: %.cpp
	@mkdir -p $(dir $@)
	$(CXX) $(STRICT) $(CPPFLAGS) $(CXXFLAGS) -MMD -MP -c $< -o $@

clean:
	rm -rf $(BUILD)/obj $(BUILD)/libresplock.a $(BUILD)/resplock

.PHONY: all lib cli clean
-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d)
