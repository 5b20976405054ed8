// The one main() of every step executable; add_step() compiles it with LADDER_STEP_ID and the
// requirement's LADDER_STEP_NEEDS (architecture) and LADDER_STEP_NEEDS_FOR (feature) set.
#include "common/step.h"

#if !defined(LADDER_STEP_ID) || !defined(LADDER_STEP_NEEDS) || !defined(LADDER_STEP_NEEDS_FOR)
#error "LADDER_STEP_ID, LADDER_STEP_NEEDS and LADDER_STEP_NEEDS_FOR must be defined (add_step sets them)"
#endif

int main(int argc, char** argv) {
  // add_step validated NEEDS, so this parse cannot throw.
  return ladder::run_declared_step(LADDER_STEP_ID, ladder::parse_requirement(LADDER_STEP_NEEDS, LADDER_STEP_NEEDS_FOR),
                                   argc, argv);
}
