// SPDX-License-Identifier: MIT
#pragma once

#include <span>
#include <string>
#include <string_view>

/// Command-line overrides of scene attributes (grain-sim --set 'XPATH=VALUE'), applied to the
/// scene text before it is read, for parameter studies.
namespace grain::io {

/// One override: every attribute the XPath selects gets the value.
struct SceneOverride {
  std::string xpath;     ///< XPath 1.0, evaluated by pugixml relative to the root element
  std::string value;     ///< the new attribute value (plain text; escaped when written)
  std::string argument;  ///< "XPATH=VALUE" as given, for messages
};

/// Splits "XPATH=VALUE" at the first '=' outside square brackets and quotes (so predicates such
/// as [@name="beads"] stay in the XPath). Throws grain::Error if there is none or the XPath is
/// empty.
SceneOverride parseSceneOverride(std::string_view argument);

/// Applies the overrides in order to the scene text and returns the new text. Attribute values
/// are replaced where they stand, so every line keeps its number and error messages about the
/// result point at the original file's lines. Each XPath must select attributes (e.g.
/// "SceneSettings/TimeStepperSettings/@endTime",
/// "SceneObjects/RigidBodies[@name=\"beads\"]/@instances"); all of them are set. If an XPath of
/// the form "P/@name" selects no attribute because no element selected by P has it, the
/// attribute is added to each of those elements. Throws SceneError ("FILE: --set 'ARG': ...",
/// FILE = displayName) if the text is not XML, the XPath is invalid, selects nothing, or selects
/// something other than attributes.
std::string applySceneOverrides(std::string_view text, const std::string& displayName,
                                std::span<const SceneOverride> overrides);

}  // namespace grain::io
