// A valid shared object named like a plugin that exports no plugin entry point at all.
extern "C" __attribute__((visibility("default"))) int not_a_tileops_plugin() { return 0; }
