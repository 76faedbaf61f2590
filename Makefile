# ksched - a thin wrapper over CMake.
#   make         install missing packages, build everything into build/ (CLI: build/ksched)
#   make test    build and run every test: unit + scenarios, ASan+UBSan unit suite, TSan stress drivers
#   make bench   build and run the default benchmark: SchedulingBasic on 5,000 generated nodes
#                (ksched bench; bench/run-all runs the whole matrix)
#   make format  clang-format every C source in place
#   make fuzz    build the libFuzzer targets (clang) into build/fuzz and fuzz each for
#                FUZZ_SECONDS (default 60); `make test` runs 10 s of each (test-fuzz)

MAKEFLAGS += --no-print-directory
JOBS ?= $(shell nproc)
BUILD := build
CMAKE_FLAGS ?=

FUZZ_SECONDS ?= 60

.PHONY: all deps build asan tsan test test-release test-asan test-tsan test-fuzz fuzz bench format clean

all: build

deps:
	@./scripts/deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

asan: deps
	@cmake -S . -B $(BUILD)/asan -DCMAKE_BUILD_TYPE=Release -DKS_SANITIZE=address $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD)/asan -j $(JOBS)

tsan: deps
	@cmake -S . -B $(BUILD)/tsan -DCMAKE_BUILD_TYPE=Release -DKS_SANITIZE=thread $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD)/tsan -j $(JOBS)

test-release: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-asan: asan
	@cd $(BUILD)/asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j $(JOBS)

test-tsan: tsan
	@cd $(BUILD)/tsan && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
		ctest --output-on-failure -L stress -j $(JOBS)

test-fuzz: deps
	@FUZZ_SECONDS=10 ./scripts/fuzz.sh $(BUILD)/fuzz
	@cd $(BUILD)/fuzz && ctest --output-on-failure -j $(JOBS)

test: test-release test-asan test-tsan test-fuzz

fuzz: deps
	@FUZZ_SECONDS=$(FUZZ_SECONDS) ./scripts/fuzz.sh $(BUILD)/fuzz

bench: build
	@./scripts/bench-default.sh $(BUILD)/ksched

format:
	@git ls-files '*.c' '*.h' '*.cc' | xargs clang-format -i

clean:
	rm -rf $(BUILD)
