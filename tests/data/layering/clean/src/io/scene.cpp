// SPDX-License-Identifier: MIT
// Fixture of tools/test_check_layering.py: io may include pugixml and Assimp.
#include <assimp/scene.h>
#include <pugixml.hpp>

#include <grain/io/scene.hpp>

#include "io/xml.hpp"
