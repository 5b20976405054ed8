// The one main() of every step executable; add_step() compiles it with LADDER_STEP_ID set.
#include "common/step.h"

#ifndef LADDER_STEP_ID
#error "LADDER_STEP_ID must name the step (add_step sets it)"
#endif

int main(int argc, char** argv) { return ladder::run_registered_step(LADDER_STEP_ID, argc, argv); }
