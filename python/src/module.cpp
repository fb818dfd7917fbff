// modelcost._modelcost: the C++ analysis behind modelcost.analyze(). The report comes back as
// plain Python values (dicts, lists, numbers); errors as modelcost.ModelcostError.
#include <Python.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "analysis_facade.h"
#include "modelcost/errors.h"

namespace nb = nanobind;

namespace {

// UTF-8 that is not valid (odd node names) is replaced, as the JSON writer does.
nb::object python_string(const std::string& text) {
  return nb::steal(PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "replace"));
}

nb::object to_python(const modelcost::Json& value) {
  using Type = modelcost::Json::value_t;
  switch (value.type()) {
    case Type::boolean: return nb::bool_(value.get<bool>());
    case Type::number_integer: return nb::steal(PyLong_FromLongLong(value.get<int64_t>()));
    case Type::number_unsigned: return nb::steal(PyLong_FromUnsignedLongLong(value.get<uint64_t>()));
    case Type::number_float: return nb::float_(value.get<double>());
    case Type::string: return python_string(value.get_ref<const std::string&>());
    case Type::array: {
      nb::list list;
      for (const auto& item : value) list.append(to_python(item));
      return list;
    }
    case Type::object: {
      nb::dict dict;
      for (const auto& item : value.items()) dict[python_string(item.key())] = to_python(item.value());
      return dict;
    }
    default: return nb::none();
  }
}

// modelcost.ModelcostError(message, exit_code), defined in Python (modelcost/errors.py).
void raise_modelcost_error(const modelcost::Error& error) {
  nb::object type = nb::module_::import_("modelcost.errors").attr("ModelcostError");
  nb::object instance = type(python_string(error.what()), static_cast<int>(error.code()));
  PyErr_SetObject(type.ptr(), instance.ptr());
}

nb::object analyze(const std::string& path, const std::vector<std::string>& dims, const std::vector<std::string>& inputs,
                   const std::string& gpus, const std::string& dtype, const std::string& batches,
                   const std::vector<std::string>& hwdb_dirs, const std::string& package_hwdb_dir) {
  modelcost::PythonRequest request{path, dims, inputs, gpus, dtype, batches, hwdb_dirs, package_hwdb_dir};
  modelcost::Json report;
  {
    nb::gil_scoped_release unlocked;  // the analysis touches no Python object
    report = modelcost::analyse_for_python(request);
  }
  return to_python(report);
}

}  // namespace

NB_MODULE(_modelcost, m) {
  nb::register_exception_translator([](const std::exception_ptr& pending, void*) {
    try {
      std::rethrow_exception(pending);
    } catch (const modelcost::Error& error) {
      raise_modelcost_error(error);
    }
  });
  m.def("analyze", &analyze, nb::arg("path"), nb::arg("dims"), nb::arg("inputs"), nb::arg("gpus"), nb::arg("dtype"),
        nb::arg("batches"), nb::arg("hwdb_dirs"), nb::arg("package_hwdb_dir"),
        "The JSON report of one model as Python values (see modelcost.analyze).");
}
