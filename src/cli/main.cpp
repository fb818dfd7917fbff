#include <iostream>

#include "cli/app.h"

int main(int argc, char** argv) { return modelcost::run_app(argc, argv, std::cout, std::cerr); }
