// Symbol visibility. Every target builds with hidden visibility; TILEOPS_API marks what the
// core exports to plugins and applications.
#pragma once

#define TILEOPS_API __attribute__((visibility("default")))
