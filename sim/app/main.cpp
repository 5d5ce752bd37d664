#include "sim/app/cli.hpp"

int main(int argc, char** argv) { return dtsim::sim::dtsim_main(argc, argv); }
