# heaphook: the two set-up commands are `make demo` and `make check`.
# Everything is built with CMake into build/; this file only drives it.
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=

.PHONY: all build deps configure check demo bench format clean

all: build

deps:
	@scripts/deps.sh build

$(BUILD)/CMakeCache.txt:
	@scripts/deps.sh build
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

configure: $(BUILD)/CMakeCache.txt

build: configure
	cmake --build $(BUILD) -j $(JOBS)

check:
	@scripts/deps.sh check
	@$(MAKE) --no-print-directory build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 600

demo: build
	@scripts/demo.sh $(BUILD)

bench:
	@scripts/deps.sh bench
	@$(MAKE) --no-print-directory build
	@bench/run.sh $(BUILD)

format:
	clang-format -i $$(git ls-files '*.c' '*.h' '*.cpp')

clean:
	rm -rf $(BUILD)
