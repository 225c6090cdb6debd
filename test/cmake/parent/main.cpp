// Compiles against fusec's public header from a parent project.
#include <fusec/fusec.h>

int parentUsesFusec() {
  fusec::Options options;
  return options.fuse ? 1 : 0;
}
