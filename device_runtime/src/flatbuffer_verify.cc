// flatbuffer_verify.cc — the FlatBuffers verification of a bundle's FlatBuffer, driven by a
// table of its fields rather than by flatc's generated Verify() functions.
//
// flatc generates one Verify() per table and instantiates the Verifier's templates per table
// type: 7 KB of the runtime's 48 on aarch64, for what is the same few checks per field. Here
// every field of every table of schema/bundle.fbs is one entry {vtable slot, kind, nested
// table}, and one function walks a table making, for each entry, exactly the calls the
// generated code makes for a field of that kind (the Verifier's own public checks: bounds,
// alignment, string terminators, depth and table count). The slots are the generated
// VT_* constants, so they cannot drift from the schema; runtime_flatbuffer_verify_test checks
// that the table lists every field of every table with its type (against flatc's reflection
// of bundle.fbs) and that this verifier accepts and refuses exactly what VerifyBundleBuffer
// does on mutated bundles.
#include "flatbuffer_verify.h"

namespace edgert {
namespace {

using namespace edge::bundle;
using namespace edgert::fbv;

#define EDGE_F(table, field, kind) {table::VT_##field, kind, kNumTables}
#define EDGE_T(table, field, kind, sub) {table::VT_##field, kind, sub}

// Every field of every table, in the order of TableId; kFirstField[t] is where table t's start.
constexpr FieldCheck kFields[] = {
    // Target
    EDGE_F(Target, ARCH, kScalar1), EDGE_F(Target, CPU, kString), EDGE_F(Target, FEATURES, kStrings),
    EDGE_F(Target, PORT, kString),
    // Section
    EDGE_F(Section, KIND, kScalar1), EDGE_F(Section, OFFSET, kScalar8), EDGE_F(Section, SIZE, kScalar8),
    EDGE_F(Section, ALIGNMENT, kScalar4), EDGE_F(Section, FORMAT, kScalar1), EDGE_F(Section, SOURCE_SECTION, kScalar4),
    EDGE_F(Section, FUNCTIONS, kVectorFunction),
    // Buffer
    EDGE_F(Buffer, NAME, kString), EDGE_F(Buffer, KIND, kScalar1), EDGE_F(Buffer, DTYPE, kScalar1),
    EDGE_F(Buffer, SHAPE, kVector8), EDGE_F(Buffer, SIZE, kScalar8), EDGE_F(Buffer, OFFSET, kScalar8),
    EDGE_F(Buffer, SECTION, kScalar4), EDGE_F(Buffer, IO_INDEX, kScalar4), EDGE_F(Buffer, MEMORY, kScalar1),
    EDGE_F(Buffer, IMAGE_WIDTH, kScalar4), EDGE_F(Buffer, IMAGE_HEIGHT, kScalar4),
    // TensorInfo
    EDGE_F(TensorInfo, NAME, kString), EDGE_F(TensorInfo, DTYPE, kScalar1), EDGE_F(TensorInfo, SHAPE, kVector8),
    EDGE_F(TensorInfo, BUFFER, kScalar4),
    // ArgContract
    EDGE_F(ArgContract, ACCESS, kScalar1), EDGE_F(ArgContract, DTYPE, kScalar1), EDGE_F(ArgContract, EXTENT, kScalar8),
    // A630Arg
    EDGE_F(A630Arg, KIND, kScalar1), EDGE_F(A630Arg, SLOT, kScalar4),
    // A630Program
    EDGE_F(A630Program, CODE_OFFSET, kScalar8), EDGE_F(A630Program, CODE_SIZE, kScalar8),
    EDGE_F(A630Program, INSTRUCTIONS, kScalar4), EDGE_F(A630Program, NOPS, kScalar4),
    EDGE_F(A630Program, FULL_REGS, kScalar4), EDGE_F(A630Program, HALF_REGS, kScalar4),
    EDGE_F(A630Program, CONSTLEN, kScalar4), EDGE_F(A630Program, BRANCHSTACK, kScalar4),
    EDGE_F(A630Program, PRIVATE_BYTES, kScalar4), EDGE_F(A630Program, SHARED_BYTES, kScalar4),
    EDGE_F(A630Program, THREADSIZE, kScalar4), EDGE_F(A630Program, MAX_WAVES, kScalar4),
    EDGE_T(A630Program, ARGS, kTables, kA630Arg), EDGE_F(A630Program, IMMEDIATES_DWORD, kScalar4),
    EDGE_F(A630Program, IMMEDIATES, kVector4), EDGE_F(A630Program, DRIVER_PARAMS_DWORD, kScalar4),
    EDGE_F(A630Program, WORK_GROUP_ID_REG, kScalar4), EDGE_F(A630Program, LOCAL_ID_REG, kScalar4),
    EDGE_F(A630Program, NUM_TEXTURES, kScalar4), EDGE_F(A630Program, NUM_SAMPLERS, kScalar4),
    EDGE_F(A630Program, NUM_IMAGES, kScalar4), EDGE_F(A630Program, LOOP_TRIPS, kVector4),
    // Kernel
    EDGE_F(Kernel, NAME, kString), EDGE_F(Kernel, SECTION, kScalar4), EDGE_F(Kernel, FUNCTION, kScalar4),
    EDGE_F(Kernel, ENTRY_NAME, kString), EDGE_T(Kernel, ARGS, kTables, kArgContract),
    EDGE_F(Kernel, PARALLEL_EXTENT, kScalar8), EDGE_F(Kernel, GLOBAL_SIZE, kVector8),
    EDGE_F(Kernel, LOCAL_SIZE, kVector8), EDGE_F(Kernel, FLOPS, kScalar8), EDGE_F(Kernel, BYTES, kScalar8),
    EDGE_T(Kernel, A630, kTable, kA630Program),
    // Command
    EDGE_F(Command, KIND, kScalar1), EDGE_F(Command, KERNEL, kScalar4), EDGE_F(Command, ARGS, kVector4),
    // PreparedFor
    EDGE_F(PreparedFor, PLATFORM, kString), EDGE_F(PreparedFor, DEVICE, kString), EDGE_F(PreparedFor, DRIVER, kString),
    // Bundle
    EDGE_F(Bundle, FORMAT_VERSION, kScalar4), EDGE_F(Bundle, PRODUCER, kString),
    EDGE_F(Bundle, SOURCE_MODEL, kString), EDGE_T(Bundle, TARGET, kTable, kTarget),
    EDGE_T(Bundle, SECTIONS, kTables, kSection), EDGE_T(Bundle, BUFFERS, kTables, kBuffer),
    EDGE_T(Bundle, INPUTS, kTables, kTensorInfo), EDGE_T(Bundle, OUTPUTS, kTables, kTensorInfo),
    EDGE_T(Bundle, KERNELS, kTables, kKernel), EDGE_T(Bundle, COMMANDS, kTables, kCommand),
    EDGE_F(Bundle, ARENA_SIZE, kScalar8), EDGE_F(Bundle, ARENA_ALIGNMENT, kScalar4),
    EDGE_F(Bundle, ARENA_LOWER_BOUND, kScalar8), EDGE_F(Bundle, REFERENCE_INPUTS, kVector4),
    EDGE_F(Bundle, REFERENCE_OUTPUTS, kVector4), EDGE_T(Bundle, PREPARED, kTable, kPreparedFor),
    EDGE_F(Bundle, REFERENCE_RTOL, kScalar4), EDGE_F(Bundle, REFERENCE_ATOL, kScalar4),
};
#undef EDGE_F
#undef EDGE_T

constexpr uint8_t kFirstField[kNumTables + 1] = {0, 4, 11, 22, 26, 29, 31, 53, 64, 67, 70, 88};
static_assert(sizeof(kFields) / sizeof(kFields[0]) == kFirstField[kNumTables], "kFirstField ends at kFields' end");

template <typename T>
using OffsetVector = flatbuffers::Vector<flatbuffers::Offset<T>>;

bool verify_table(flatbuffers::Verifier& v, const flatbuffers::Table* t, TableId id) {
  if (!t->VerifyTableStart(v)) return false;
  for (uint32_t i = kFirstField[id]; i < kFirstField[id + 1]; ++i) {
    const FieldCheck& f = kFields[i];
    bool ok = true;
    switch (f.kind) {
      case kScalar1: ok = t->VerifyField<uint8_t>(v, f.slot, 1); break;
      case kScalar4: ok = t->VerifyField<uint32_t>(v, f.slot, 4); break;
      case kScalar8: ok = t->VerifyField<uint64_t>(v, f.slot, 8); break;
      default: {
        if (!t->VerifyOffset(v, f.slot)) return false;
        const uint8_t* p = t->GetPointer<const uint8_t*>(f.slot);
        if (!p) continue;  // absent: every Verify* of a null pointer is true
        switch (f.kind) {
          case kString: ok = v.VerifyString(reinterpret_cast<const flatbuffers::String*>(p)); break;
          case kStrings: {
            const auto* strings = reinterpret_cast<const OffsetVector<flatbuffers::String>*>(p);
            ok = v.VerifyVector(strings) && v.VerifyVectorOfStrings(strings);
            break;
          }
          case kVector4: ok = v.VerifyVectorOrString(p, 4); break;
          case kVector8: ok = v.VerifyVectorOrString(p, 8); break;
          case kVectorFunction: ok = v.VerifyVectorOrString(p, sizeof(Function)); break;
          case kTable: ok = verify_table(v, reinterpret_cast<const flatbuffers::Table*>(p), f.sub); break;
          default: {  // kTables
            const auto* tables = reinterpret_cast<const OffsetVector<flatbuffers::Table>*>(p);
            ok = v.VerifyVector(tables);
            for (flatbuffers::uoffset_t k = 0; ok && k < tables->size(); ++k) ok = verify_table(v, tables->Get(k), f.sub);
            break;
          }
        }
      }
    }
    if (!ok) return false;
  }
  return v.EndTable();
}

}  // namespace

const FieldCheck* fbv::fields_of(TableId id, uint32_t* count) {
  *count = kFirstField[id + 1] - kFirstField[id];
  return kFields + kFirstField[id];
}

bool verify_bundle_flatbuffer(flatbuffers::Verifier& v, const uint8_t* fb, size_t size) {
  // As Verifier::VerifyBuffer<Bundle>(BundleIdentifier()) does, with Bundle's fields from the table.
  using flatbuffers::soffset_t;  // FLATBUFFERS_MIN_BUFFER_SIZE names them unqualified
  using flatbuffers::uoffset_t;
  if (!v.Check(size >= FLATBUFFERS_MIN_BUFFER_SIZE) ||
      !v.Check(size >= 2 * sizeof(flatbuffers::uoffset_t) && BundleBufferHasIdentifier(fb)))
    return false;
  const flatbuffers::uoffset_t root = v.VerifyOffset(0);
  return v.Check(root != 0) && verify_table(v, reinterpret_cast<const flatbuffers::Table*>(fb + root), kBundle);
}

}  // namespace edgert
