// SPDX-License-Identifier: MIT
#include "hdf5_util.hpp"

namespace grain::convert::h5 {

File createFile(const std::filesystem::path& path) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  const hid_t f = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (f < 0) {
    throw ConvertError(path.string() + ": cannot create the HDF5 file");
  }
  return File(f);
}

Group createGroup(hid_t loc, const std::string& name) {
  return Group(checkId(H5Gcreate2(loc, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                       "creating group " + name));
}

void setAttribute(hid_t loc, const std::string& name, const std::string& value) {
  Type type(checkId(H5Tcopy(H5T_C_S1), "string type"));
  check(H5Tset_size(type.get(), std::max<std::size_t>(1, value.size())), "string size");
  check(H5Tset_strpad(type.get(), H5T_STR_NULLPAD), "string padding");
  Space space(checkId(H5Screate(H5S_SCALAR), "attribute space"));
  Attribute a(
      checkId(H5Acreate2(loc, name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
              "attribute " + name));
  const std::string stored = value.empty() ? std::string(1, '\0') : value;
  check(H5Awrite(a.get(), type.get(), stored.data()), "writing attribute " + name);
}

}  // namespace grain::convert::h5
