# heaphook: the two set-up commands are `make demo` and `make check`.
# Everything is built with CMake into build/; this file only drives it.
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=

# A colon in BUILD ends a rule's target in make itself ($(BUILD)/CMakeCache.txt
# below: "target pattern contains no '%'"), before check could refuse it.
ifneq ($(findstring :,$(BUILD)),)
$(error the build directory $(BUILD) has a colon in its path, where make and LD_PRELOAD split it; build elsewhere, e.g. make check BUILD=/tmp/heaphook-build)
endif

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

# The tests preload the libraries from the build directory, and the loader
# splits LD_PRELOAD at spaces and colons (heaphook run works around it; the
# tests name the libraries directly): such a build directory is refused.
check:
	@d='$(BUILD)'; case $$d in /*) ;; *) d="$$(pwd)/$$d";; esac; case $$d in *[\ :]*) \
	  echo "make check: the build directory $$d has a space or a colon in its path, where LD_PRELOAD is split; build elsewhere, e.g. make check BUILD=/tmp/heaphook-build" >&2; exit 2;; esac
	@scripts/deps.sh check
	@$(MAKE) --no-print-directory build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 600

demo: build
	@scripts/demo.sh $(BUILD)

# Configured again after deps.sh: a build directory made before liblz4-dev
# was installed (by make check, say) keeps CMake's "not found" until then,
# and the codec bench was skipped as if the package were missing.
bench:
	@scripts/deps.sh bench
	@cmake -S . -B $(BUILD) $(CMAKE_FLAGS) >/dev/null
	@$(MAKE) --no-print-directory build
	@bench/run.sh $(BUILD)

format:
	clang-format -i $$(git ls-files '*.c' '*.h' '*.cpp')

clean:
	rm -rf $(BUILD)
