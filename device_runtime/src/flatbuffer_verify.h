// flatbuffer_verify.h — the table-driven FlatBuffers verifier of a bundle (flatbuffer_verify.cc):
// what it knows of each field of schema/bundle.fbs, shared with its test.
#pragma once
#include <cstddef>
#include <cstdint>

#include "bundle_generated.h"

namespace edgert {

// Verifier::VerifyBuffer<Bundle>(BundleIdentifier()) without flatc's per-table Verify code:
// true when the FlatBuffer `fb` (`size` bytes, what `v` was made over) passes every check the
// generated code makes.
bool verify_bundle_flatbuffer(flatbuffers::Verifier& v, const uint8_t* fb, size_t size);

namespace fbv {

// What a field holds, as the generated code verifies it.
enum Kind : uint8_t {
  kScalar1,       // bool, byte, ubyte and 1-byte enums: VerifyField<uint8_t>(.., 1)
  kScalar4,       // int, uint, float: VerifyField<uint32_t>(.., 4)
  kScalar8,       // long, ulong, double: VerifyField<uint64_t>(.., 8)
  kString,        // VerifyOffset, VerifyString
  kStrings,       // [string]: VerifyOffset, VerifyVector, VerifyVectorOfStrings
  kVector4,       // [uint] ([int], [float]): VerifyOffset, VerifyVector (4-byte elements)
  kVector8,       // [long], [ulong]
  kVectorFunction,  // [Function] (a 16-byte struct)
  kTable,         // VerifyOffset, VerifyTable
  kTables,        // [table]: VerifyOffset, VerifyVector, VerifyVectorOfTables
};

// The tables of bundle.fbs, as `sub` of kTable / kTables fields.
enum TableId : uint8_t {
  kTarget, kSection, kBuffer, kTensorInfo, kArgContract, kA630Arg, kA630Program, kKernel,
  kCommand, kPreparedFor, kBundle, kNumTables
};

struct FieldCheck {
  flatbuffers::voffset_t slot;  // the generated VT_* constant
  Kind kind;
  TableId sub;     // kTable / kTables: the table's type
};

// The entries of table `id`, *count of them (for the test: the verifier reads kFields itself).
const FieldCheck* fields_of(TableId id, uint32_t* count);

}  // namespace fbv
}  // namespace edgert
