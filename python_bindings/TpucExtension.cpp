// Native part of tpuc's MLIR Python package: dialect registration, pass
// registration, the interpreter and weight saving, all through tpuc's C API.
#include "tpuc-c/Dialects.h"
#include "mlir-c/Dialect/Func.h"
#include "mlir-c/Dialect/Quant.h"
#include "mlir/Bindings/Python/Nanobind.h"
#include "mlir/Bindings/Python/NanobindAdaptors.h"

#include <string>
#include <vector>

namespace nb = nanobind;

namespace {

using FloatArray = nb::ndarray<const float, nb::c_contig, nb::device::cpu>;

/// Borrowed views of a dict of float32 arrays (alive as long as this is).
struct Views {
  std::vector<std::string> names;
  std::vector<FloatArray> arrays;
  std::vector<std::vector<int64_t>> shapes;
  std::vector<TpucTensorView> views;
  explicit Views(nb::dict d) {
    for (auto [key, value] : d) {
      names.push_back(nb::cast<std::string>(key));
      arrays.push_back(nb::cast<FloatArray>(value));
      const FloatArray &a = arrays.back();
      shapes.emplace_back(a.shape_ptr(), a.shape_ptr() + a.ndim());
    }
    for (size_t i = 0; i < names.size(); ++i)
      views.push_back({mlirStringRefCreate(names[i].data(), names[i].size()),
                       arrays[i].data(), shapes[i].data(),
                       intptr_t(shapes[i].size())});
  }
};

nb::dict interpret(MlirModule module, nb::dict inputs, bool allTensors,
                   nb::dict references) {
  Views in(inputs), refs(references);
  nb::dict out;
  std::string error;
  auto onTensor = [](TpucTensorView t, void *ud) {
    auto *dict = static_cast<nb::dict *>(ud);
    size_t n = 1;
    std::vector<size_t> shape;
    for (intptr_t i = 0; i < t.rank; ++i) {
      shape.push_back(size_t(t.shape[i]));
      n *= size_t(t.shape[i]);
    }
    auto *copy = new std::vector<float>(t.data, t.data + n);
    nb::capsule owner(copy, [](void *p) noexcept {
      delete static_cast<std::vector<float> *>(p);
    });
    (*dict)[nb::str(t.name.data, t.name.length)] =
        nb::ndarray<nb::numpy, float>(copy->data(), shape.size(), shape.data(),
                                      owner);
  };
  auto onError = [](MlirStringRef s, void *ud) {
    static_cast<std::string *>(ud)->append(s.data, s.length);
  };
  MlirLogicalResult r =
      tpucInterpret(module, in.views.data(), intptr_t(in.views.size()),
                    refs.views.data(), intptr_t(refs.views.size()), allTensors,
                    onTensor, &out, onError, &error);
  if (mlirLogicalResultIsFailure(r))
    throw std::runtime_error(error);
  return out;
}

} // namespace

NB_MODULE(_tpucDialects, m) {
  m.doc() = "tpuc dialects, passes and interpreter";
  m.def(
      "register_dialects",
      [](MlirContext context) {
        for (MlirDialectHandle h :
             {mlirGetDialectHandle__func__(), mlirGetDialectHandle__quant__(),
              mlirGetDialectHandle__top__(), mlirGetDialectHandle__tpu__()}) {
          mlirDialectHandleRegisterDialect(h, context);
          mlirDialectHandleLoadDialect(h, context);
        }
      },
      nb::arg("context").none() = nb::none(),
      "Registers and loads the func, quant, top and tpu dialects.");
  m.def(
      "check_property_names",
      [](MlirContext context, const std::string &text) -> std::string {
        std::string error;
        tpucCheckPropertyNames(
            context, mlirStringRefCreate(text.data(), text.size()),
            [](MlirStringRef s, void *ud) {
              static_cast<std::string *>(ud)->append(s.data, s.length);
            },
            &error);
        return error;
      },
      nb::arg("context"), nb::arg("text"),
      "Empty, or an error naming the first generic op of `text` whose "
      "`<{...}>` properties hold an entry the op does not define.");
  m.def("register_passes", &tpucRegisterAllPasses,
        "Registers tpuc's passes for PassManager.parse.");
  m.def("interpret", &interpret, nb::arg("module"), nb::arg("inputs"),
        nb::arg("all_tensors") = false, nb::arg("references") = nb::dict(),
        "Runs the module's entry function on float32 inputs keyed by input "
        "name; returns the outputs (or every named tensor) as numpy arrays. "
        "With references (float32 arrays keyed by tensor name) every op "
        "runs on the references of its inputs (local mode).");
  m.def(
      "save_weights",
      [](MlirModule module, const std::string &path) {
        if (mlirLogicalResultIsFailure(tpucSaveWeights(
                module, mlirStringRefCreate(path.data(), path.size()))))
          throw std::runtime_error("cannot save weights to '" + path + "'");
      },
      nb::arg("module"), nb::arg("path"),
      "Writes the module's weights to an npz and points the module at it.");
  m.def(
      "add_weight",
      [](const std::string &file, const std::string &name,
         const std::string &descr,
         nb::ndarray<nb::c_contig, nb::device::cpu, nb::ro> array) {
        std::vector<int64_t> shape(array.shape_ptr(),
                                   array.shape_ptr() + array.ndim());
        tpucAddWeight(mlirStringRefCreate(file.data(), file.size()),
                      mlirStringRefCreate(name.data(), name.size()),
                      mlirStringRefCreate(descr.data(), descr.size()),
                      array.data(), intptr_t(array.nbytes()), shape.data(),
                      intptr_t(shape.size()));
      },
      nb::arg("file"), nb::arg("name"), nb::arg("descr"), nb::arg("array"),
      "Hands a C-contiguous array (numpy dtype string `descr`) to the weight "
      "store as weight `name` of `file`, without writing the file.");
  m.def(
      "drop_weights",
      [](const std::string &file) {
        tpucDropWeights(mlirStringRefCreate(file.data(), file.size()));
      },
      nb::arg("file"), "Forgets every weight registered under `file`.");
}
