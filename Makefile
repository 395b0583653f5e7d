# Builds resplock without CMake.
#   make                               build/libresplock.a (core + POSIX port) and build/resplock
#   make CROSS=arm-none-eabi- CXXFLAGS="-Os -mcpu=cortex-m4 -mthumb"
#                                      build/libresplock.a for a bare-metal target (core only)
#   make CXX=clang++ BUILD=build/clang another compiler, another output folder
#   make clean
# Cortex-M4 proofs with arm-none-eabi-g++ (see tests/target/):
#   make size                          flash/RAM per object, worst-case stack per public call
#   make size SIZE_CHECK=1             the same, failing when the core is over its budget
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
# Ports built into the library: POSIX on a hosted target, none on bare metal.
ifneq (,$(findstring none-eabi,$(CROSS)))
PORTS ?=
else
PORTS ?= posix
endif

STRICT := -std=c++17 -Wall -Wextra -Wpedantic -Wconversion -Wshadow -Werror -fno-exceptions -fno-rtti
CPPFLAGS += -Iinclude $(foreach p,$(PORTS),-Iports/$(p))

CORE_SRC := $(wildcard src/*.cpp)
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
	$(CXX) $(LDFLAGS) -o $@ $(CLI_OBJ) $(BUILD)/libresplock.a -pthread

$(BUILD)/obj/%.o: %.cpp
	@mkdir -p $(dir $@)
	$(CXX) $(STRICT) $(CPPFLAGS) $(CXXFLAGS) -MMD -MP -c $< -o $@

clean:
	rm -rf $(BUILD)/obj $(BUILD)/libresplock.a $(BUILD)/resplock

.PHONY: all lib cli clean

# Footprint on a Cortex-M4 (own folder; never mixed with the objects above). Budget: core flash
# 4096 B, core .data+.bss 0 B, 512 B of stack per public call (the port's own stack excluded).
SIZE_BUILD ?= $(BUILD)/size-cortex-m4
SIZE_CXX ?= arm-none-eabi-g++
SIZE_FLAGS := -Os -mcpu=cortex-m4 -mthumb -ffunction-sections -fdata-sections
SIZE_ANALYSIS := -fstack-usage -fcallgraph-info=su
SIZE_OBJ := $(patsubst %.cpp,$(SIZE_BUILD)/%.o,$(wildcard src/*.cpp))

size: $(SIZE_OBJ)
	@python3 tests/target/size_report.py --build $(SIZE_BUILD) --compiler "$(SIZE_CXX)" \
	    --flags "$(SIZE_FLAGS) -fno-exceptions -fno-rtti" $(if $(SIZE_CHECK),--check)

$(SIZE_BUILD)/src/%.o: src/%.cpp
	@mkdir -p $(dir $@)
	$(SIZE_CXX) $(STRICT) -Iinclude $(SIZE_FLAGS) $(SIZE_ANALYSIS) -MMD -MP -c $< -o $@

# The unit tests as Cortex-M4 programs (tests/target/cortex-m4/unit.mk), each run under QEMU.
M4_BUILD ?= $(BUILD)/cortex-m4
cortex-m4-tests:
	$(MAKE) -f tests/target/cortex-m4/unit.mk M4_BUILD=$(M4_BUILD)
	@status=0; for elf in $(M4_BUILD)/unit_*.elf; do \
	    sh tests/target/cortex-m4/run.sh run $$elf || status=1; done; exit $$status

.PHONY: size cortex-m4-tests
-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(SIZE_OBJ:.o=.d)
