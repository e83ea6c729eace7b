// SPDX-License-Identifier: MIT
#include <iostream>

int main() {
  std::cout << "grain-sim\n";
  return 0;
}
